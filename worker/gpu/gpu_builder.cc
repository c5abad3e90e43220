#include "worker/gpu/gpu_builder.h"

#include "compiler/codegen/gpu/gpu_candidate.h"

namespace tuned::worker::gpu {
namespace {

class RealGpuBuilder : public GpuBuilder {
 public:
  StatusOr<v1::GpuCandidateProgram> Build(const std::shared_ptr<const ir::Workload>& workload,
                                          const v1::MeasureJob& job, const target::Target& target) override {
    return codegen::gpu::BuildGpuCandidate(workload, job.trace(), target);
  }
};

}  // namespace

std::unique_ptr<GpuBuilder> MakeGpuBuilder() { return std::make_unique<RealGpuBuilder>(); }

}  // namespace tuned::worker::gpu

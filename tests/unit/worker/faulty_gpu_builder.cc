#include "tests/unit/worker/faulty_gpu_builder.h"

#include <algorithm>

#include "compiler/codegen/cuda/cuda_candidate.h"

namespace tuned::worker::testing {

void GpuFaultTable::Set(const std::string& job_id, GpuFault fault) {
  std::lock_guard lock(mu_);
  faults_[job_id] = fault;
}

bool GpuFaultTable::Find(const std::string& job_id, GpuFault* fault) const {
  std::lock_guard lock(mu_);
  auto it = faults_.find(job_id);
  if (it == faults_.end()) return false;
  *fault = it->second;
  return true;
}

namespace {

class FaultyGpuBuilder : public gpu::GpuBuilder {
 public:
  explicit FaultyGpuBuilder(std::shared_ptr<GpuFaultTable> faults) : faults_(std::move(faults)) {}

  StatusOr<v1::GpuCandidateProgram> Build(const std::shared_ptr<const ir::Workload>& workload,
                                          const v1::MeasureJob& job, const target::Target& target) override {
    TUNED_ASSIGN_OR_RETURN(v1::GpuCandidateProgram program, real_->Build(workload, job, target));
    GpuFault fault;
    if (!faults_->Find(job.job_id(), &fault)) return program;
    std::string output = workload->output_stage().output->name;
    std::replace(output.begin(), output.end(), '.', '_');
    const bool cuda = target.kind == target::TargetKind::kCuda;
    // On CUDA the spin reads the SM's clock: NVVM keeps a volatile local in a register, and
    // such a spin did not hang on an H100 (CUDA 13); a clock read is never optimised away.
    const std::string endless = cuda ? "  for (long long start = clock64(); clock64() >= start;) {\n  }\n"
                                     : "  for (volatile int spin = 1; spin;) {\n  }\n";
    const std::string planted = fault == GpuFault::kOutOfBoundsStore
                                    ? "  " + output + "[(long)1 << 40] = 1.0f;\n"
                                    : endless;
    std::string source = program.source();
    // The first kernel's body starts after the first line that ends its parameter list.
    size_t body = source.find(") {\n", source.find(cuda ? "__global__" : "__kernel"));
    if (body == std::string::npos) return InternalError("no kernel body to plant a fault in");
    source.insert(body + 4, planted);
    program.set_source(source);
    if (cuda) TUNED_RETURN_IF_ERROR(codegen::cuda::BuildCudaBinary(target, program));  // the planted source's cubin
    return program;
  }

 private:
  std::shared_ptr<GpuFaultTable> faults_;
  std::unique_ptr<gpu::GpuBuilder> real_ = gpu::MakeGpuBuilder();
};

}  // namespace

gpu::GpuBuilderFactory FaultyGpuBuilderFactory(std::shared_ptr<GpuFaultTable> faults) {
  return [faults]() -> StatusOr<std::unique_ptr<gpu::GpuBuilder>> {
    return std::unique_ptr<gpu::GpuBuilder>(new FaultyGpuBuilder(faults));
  };
}

}  // namespace tuned::worker::testing

#ifndef TUNED_WORKER_GPU_GPU_BUILDER_H_
#define TUNED_WORKER_GPU_GPU_BUILDER_H_

/// \file
/// Building a GPU candidate on the worker's CPU, ahead of the device: the job's trace through
/// codegen::gpu::BuildGpuCandidate (compiler/codegen/gpu/gpu_candidate.h; for CUDA that includes
/// the NVRTC build, so the GPU never waits for a compile; an OpenCL program is built by the
/// runner process, where the device's compiler is). Like worker/builder.h, the engine takes its
/// builder from a factory, so a test can plant faulty kernels
/// (tests/unit/worker/faulty_gpu_builder.cc); nothing on the wire selects a builder.

#include <functional>
#include <memory>

#include "common/status.h"
#include "compiler/ir/workload.h"
#include "target/target.h"
#include "tuned/v1/gpu_runner.pb.h"
#include "tuned/v1/measure.pb.h"

namespace tuned::worker::gpu {

class GpuBuilder {
 public:
  virtual ~GpuBuilder() = default;
  /// Builds `job`'s trace for `workload` on `target` (cuda or opencl). Runs in a build process.
  virtual StatusOr<v1::GpuCandidateProgram> Build(const std::shared_ptr<const ir::Workload>& workload,
                                                  const v1::MeasureJob& job, const target::Target& target) = 0;
};

/// The real builder: BuildGpuCandidate of the job's trace.
std::unique_ptr<GpuBuilder> MakeGpuBuilder();

using GpuBuilderFactory = std::function<StatusOr<std::unique_ptr<GpuBuilder>>()>;

}  // namespace tuned::worker::gpu

#endif  // TUNED_WORKER_GPU_GPU_BUILDER_H_

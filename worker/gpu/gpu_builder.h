#ifndef TUNED_WORKER_GPU_GPU_BUILDER_H_
#define TUNED_WORKER_GPU_GPU_BUILDER_H_

/// \file
/// Building a GPU candidate on the worker's CPU: the job's trace replayed, lowered to kernels
/// within the target's limits (compiler/lower/gpu) and printed in the target's dialect
/// (compiler/codegen/gpu), with one launch per kernel naming its buffers. The device build is
/// here too for CUDA (NVRTC to a cubin, cuda_candidate.h: the GPU never waits for a compile);
/// an OpenCL program is built by the runner process, where the device's compiler is. Like worker/builder.h, the engine
/// takes its builder from a factory, so a test can plant faulty kernels
/// (tests/unit/worker/faulty_gpu_builder.cc); nothing on the wire selects a builder.
///
/// Buffer indices of a launch: the workload's inputs (argument order), then its output, then
/// the program's global intermediates.

#include <functional>
#include <memory>

#include "common/status.h"
#include "compiler/ir/workload.h"
#include "compiler/lower/gpu/gpu_program.h"
#include "target/target.h"
#include "tuned/v1/gpu_runner.pb.h"
#include "tuned/v1/measure.pb.h"
#include "tuned/v1/trace.pb.h"

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

/// `trace` of `workload` lowered for `target` as source and launches ("invalid trace: ...",
/// "replay: ...", "GPU lowering: ..." on failure; a cuda target's NVRTC error as NVRTC gives
/// it). Also what `tuned compile` writes.
StatusOr<v1::GpuCandidateProgram> BuildGpuCandidate(const std::shared_ptr<const ir::Workload>& workload,
                                                    const v1::Trace& trace, const target::Target& target);

/// A lowered program's source in `target`'s dialect and its launches.
v1::GpuCandidateProgram CandidateOf(const lower::gpu::GpuProgram& program, const target::Target& target);

}  // namespace tuned::worker::gpu

#endif  // TUNED_WORKER_GPU_GPU_BUILDER_H_

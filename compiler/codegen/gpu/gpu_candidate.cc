// CheckGpuTarget, BuildGpuCandidate and CandidateOf (gpu_candidate.h).

#include "compiler/codegen/gpu/gpu_candidate.h"

#include <algorithm>

#include "compiler/codegen/cuda/cuda_candidate.h"
#include "compiler/codegen/gpu/gpu_source.h"
#include "compiler/lower/gpu/lower_gpu.h"
#include "compiler/lower/pipeline.h"
#include "compiler/schedule/schedule.h"

namespace tuned::codegen::gpu {

Status CheckGpuTarget(const target::Target& target) {
  if (target.kind != target::TargetKind::kCuda && target.kind != target::TargetKind::kOpencl) {
    return InvalidArgumentError("target '" + target.ToString() + "' is not a GPU target (cuda or opencl)");
  }
  if (target.kind == target::TargetKind::kCuda && cuda::CudaCompilerVersion().empty()) {
    return FailedPreconditionError("target '" + target.ToString() +
                                   "': this build has no CUDA support (no NVRTC: install the CUDA toolkit and "
                                   "reconfigure with TUNED_ENABLE_CUDA=ON)");
  }
  return Status::Ok();
}

v1::GpuCandidateProgram CandidateOf(const lower::gpu::GpuProgram& program, const target::Target& target) {
  v1::GpuCandidateProgram candidate;
  candidate.set_source(PrintGpuSource(program, DialectOf(target)));
  for (const ir::Buffer& b : program.intermediates) {
    candidate.add_intermediate_bytes(uint64_t(b->num_elements() * b->dtype.bytes()));
  }
  auto index_of = [&](const ir::Buffer& b) {
    auto arg = std::find(program.args.begin(), program.args.end(), b);
    if (arg != program.args.end()) return uint32_t(arg - program.args.begin());
    auto mid = std::find(program.intermediates.begin(), program.intermediates.end(), b);
    return uint32_t(program.args.size() + size_t(mid - program.intermediates.begin()));
  };
  for (const lower::gpu::GpuKernel& kernel : program.kernels) {
    v1::GpuKernelLaunch* launch = candidate.add_launches();
    launch->set_function(KernelFunctionName(kernel));
    for (int d = 0; d < 3; ++d) {
      launch->add_grid(kernel.grid[size_t(d)]);
      launch->add_block(kernel.block[size_t(d)]);
    }
    for (const ir::Buffer& b : kernel.params) launch->add_buffers(index_of(b));
  }
  return candidate;
}

StatusOr<v1::GpuCandidateProgram> BuildGpuCandidate(const std::shared_ptr<const ir::Workload>& workload,
                                                    const v1::Trace& trace, const target::Target& target) {
  StatusOr<schedule::Trace> parsed = lower::ParseTraceProto(trace);
  if (!parsed.ok()) return parsed.status().WithContext("invalid trace");
  StatusOr<schedule::Schedule> sch = schedule::ReplayTrace(workload, *parsed);
  if (!sch.ok()) return sch.status().WithContext("replay");
  StatusOr<lower::gpu::GpuProgram> program =
      lower::gpu::LowerGpu(*sch, LimitsOf(target), "default_function");
  if (!program.ok()) return program.status().WithContext("GPU lowering");
  v1::GpuCandidateProgram candidate = CandidateOf(*program, target);
  if (target.kind == target::TargetKind::kCuda) TUNED_RETURN_IF_ERROR(cuda::BuildCudaBinary(target, candidate));
  return candidate;
}

}  // namespace tuned::codegen::gpu

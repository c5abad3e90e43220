#ifndef TUNED_COMPILER_CODEGEN_GPU_GPU_CANDIDATE_H_
#define TUNED_COMPILER_CODEGEN_GPU_GPU_CANDIDATE_H_

/// \file
/// A GPU program built from a trace: the trace replayed, lowered to kernels within the target's
/// limits (compiler/lower/gpu), printed in the target's dialect (gpu_source.h), with one launch
/// per kernel naming its buffers; for a cuda target also the device build (NVRTC to a cubin with
/// its registers checked, codegen/cuda/cuda_candidate.h). An OpenCL program stays source: the
/// device's own compiler builds it where it runs. One function for everything that builds a GPU
/// program of a record or candidate: a worker ahead of the device, `tuned compile` and
/// <tuned/compiler.h>.
///
/// Buffer indices of a launch: the workload's inputs (argument order), then its output, then
/// the program's global intermediates.

#include <memory>

#include "common/status.h"
#include "compiler/ir/workload.h"
#include "compiler/lower/gpu/gpu_program.h"
#include "target/target.h"
#include "tuned/v1/gpu_runner.pb.h"
#include "tuned/v1/trace.pb.h"

namespace tuned::codegen::gpu {

/// Whether this build can build programs for `target`: InvalidArgument for a target that is not
/// cuda or opencl, FailedPrecondition for cuda in a build without NVRTC. Said before any record
/// is read or runner started.
Status CheckGpuTarget(const target::Target& target);

/// `trace` of `workload` lowered for `target` (cuda or opencl) as source and launches
/// ("invalid trace: ...", "replay: ...", "GPU lowering: ..." on failure; a cuda target's NVRTC
/// error as NVRTC gives it).
StatusOr<v1::GpuCandidateProgram> BuildGpuCandidate(const std::shared_ptr<const ir::Workload>& workload,
                                                    const v1::Trace& trace, const target::Target& target);

/// A lowered program's source in `target`'s dialect and its launches (no device build).
v1::GpuCandidateProgram CandidateOf(const lower::gpu::GpuProgram& program, const target::Target& target);

}  // namespace tuned::codegen::gpu

#endif  // TUNED_COMPILER_CODEGEN_GPU_GPU_CANDIDATE_H_

#ifndef TUNED_COMPILER_REUSE_GPU_EMIT_GPU_LIBRARY_H_
#define TUNED_COMPILER_REUSE_GPU_EMIT_GPU_LIBRARY_H_

/// \file
/// A GPU target's program from the tuning log, and the files a user links it from: what
/// `tuned compile --target opencl|cuda` writes and <tuned/compiler.h>'s GpuKernel holds.
///
/// SelectGpuProgram builds the best record's trace exactly as a worker builds a candidate
/// (codegen/gpu/gpu_candidate.h): for cuda the cubin NVRTC makes for the target's arch, for
/// opencl the OpenCL C source. A GPU target has no default schedule: without a record it is
/// NotFound. EmitGpuLibrary writes the program and a C launcher for it (gpu_launcher.h).
///   opencl: OUT.cl, built by the launcher for the caller's context and device; compile OUT.c
///           with `cc -c` and link -lOpenCL.
///   cuda:   OUT.cubin, embedded in a launcher over the CUDA driver API; compile OUT.c with
///           `cc -c -I<CUDA>/include` and link -lcuda.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "compiler/ir/workload.h"
#include "compiler/reuse/record_source.h"
#include "target/target.h"
#include "tuned/v1/gpu_runner.pb.h"

namespace tuned::reuse {

/// The best record of a workload on a GPU target, built.
struct GpuSelection {
  std::shared_ptr<const ir::Workload> workload;
  target::Target target;
  v1::GpuCandidateProgram program;  // cuda: `binary` is the cubin; opencl: `source`
  int64_t record_id = 0;
  std::string trace_hash;
  double median_seconds = 0;  // the record's measured median
  std::vector<std::string> warnings;  // e.g. that an older code generation timed the record
};

/// The best record of `workload` on `target` in `source`, built. Fails as
/// codegen::gpu::CheckGpuTarget does,
/// NotFound (with the log's reason) without a record, or with the build's error.
StatusOr<GpuSelection> SelectGpuProgram(const ir::Workload& workload, const target::Target& target,
                                        RecordSource& source);

/// Whether a launcher named `name` can be written for `workload`: InvalidArgument for a `name`
/// that is not a C identifier or buffers a launcher cannot name (CheckArgumentNames).
Status CheckLauncherNames(const ir::Workload& workload, const std::string& name);

struct GpuLibraryFiles {
  std::string program_path;   // OUT.cl (opencl) or OUT.cubin (cuda)
  std::string launcher_path;  // OUT.c
  std::string header_path;    // OUT.h
};

/// Writes `selection`'s program, OUT.c and OUT.h, OUT being `output` without its extension, with
/// entry points prefixed `name`. Fails as CheckLauncherNames does, or when a file cannot be
/// written.
StatusOr<GpuLibraryFiles> EmitGpuLibrary(const GpuSelection& selection, const std::string& output,
                                         const std::string& name);

}  // namespace tuned::reuse

#endif  // TUNED_COMPILER_REUSE_GPU_EMIT_GPU_LIBRARY_H_

#ifndef TUNED_CLI_GPU_COMPILE_H_
#define TUNED_CLI_GPU_COMPILE_H_

// `tuned compile --target opencl|cuda ...`: the best record's program and a C launcher for it
// (gpu_launcher.h). opencl: the OpenCL C source (OUT.cl), built by the launcher for the caller's
// context and device; compile OUT.c with `cc -c` and link -lOpenCL. cuda: the cubin NVRTC builds
// for the target's arch (OUT.cubin), embedded in a launcher over the CUDA driver API; compile
// OUT.c with `cc -c -I<CUDA>/include` and link -lcuda.

#include <string>

#include "common/status.h"
#include "compiler/ir/workload.h"
#include "compiler/reuse/record_source.h"
#include "target/target.h"

namespace tuned::cli {

struct GpuCompileOutput {
  std::string program_path;   // OUT.cl (opencl) or OUT.cubin (cuda)
  std::string launcher_path;  // OUT.c
  std::string header_path;    // OUT.h
  int64_t record_id = 0;
  std::string trace_hash;
  double median_seconds = 0;
};

/// Writes the best record of `workload` on `target` (an opencl or cuda target) from `source` as
/// the program, OUT.c and OUT.h, OUT being `output` without its extension. NotFound without a
/// record; InvalidArgument for a `name` that is not a C identifier; FailedPrecondition for a
/// cuda target in a build without NVRTC.
StatusOr<GpuCompileOutput> CompileGpu(const ir::Workload& workload, const target::Target& target,
                                      reuse::RecordSource& source, const std::string& output,
                                      const std::string& name);

}  // namespace tuned::cli

#endif  // TUNED_CLI_GPU_COMPILE_H_

#ifndef TUNED_CLI_GPU_COMPILE_H_
#define TUNED_CLI_GPU_COMPILE_H_

// `tuned compile --target opencl ...`: the best record's program as OpenCL C source (OUT.cl)
// and a launcher (OUT.c, OUT.h): the source embedded, `NAME_build` to build it for a caller's
// context and device, one C entry point per kernel (`NAME_<kernel>`: arguments set, enqueued on
// the caller's queue with the recorded grid and block), and `NAME` running every kernel in
// order (intermediates allocated on the queue's context). Compile it with `cc -c OUT.c` and link
// -lOpenCL.

#include <string>

#include "common/status.h"
#include "compiler/ir/workload.h"
#include "compiler/reuse/record_source.h"
#include "target/target.h"

namespace tuned::cli {

struct GpuCompileOutput {
  std::string source_path;    // OUT.cl
  std::string launcher_path;  // OUT.c
  std::string header_path;    // OUT.h
  int64_t record_id = 0;
  std::string trace_hash;
  double median_seconds = 0;
};

/// Writes the best record of `workload` on `target` (an opencl target) from `source` as
/// OUT.cl, OUT.c and OUT.h, OUT being `output` without its extension. NotFound without a record.
StatusOr<GpuCompileOutput> CompileGpu(const ir::Workload& workload, const target::Target& target,
                                      reuse::RecordSource& source, const std::string& output,
                                      const std::string& name);

}  // namespace tuned::cli

#endif  // TUNED_CLI_GPU_COMPILE_H_

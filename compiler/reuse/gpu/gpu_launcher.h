#ifndef TUNED_COMPILER_REUSE_GPU_GPU_LAUNCHER_H_
#define TUNED_COMPILER_REUSE_GPU_GPU_LAUNCHER_H_

// The C launcher `tuned compile` writes beside a GPU program (OUT.c and OUT.h): what both
// dialects share (the frame of both files, C literals, parameter lists, buffer names, file
// writing), and one writer per dialect, side by side: opencl_launcher.cc (OpenCL API, the
// source built at run time) and cuda_launcher.cc (CUDA driver API, the cubin embedded).
//
// Either launcher has, for a NAME: a way to get the program onto the caller's device, one entry
// per kernel (`NAME_<kernel>`, launched with the recorded grid and block on the caller's queue or
// stream) and `NAME` running every kernel in order, its global intermediates allocated for it.
// Buffer parameters are named after the workload's buffers, intermediates `intermediateN`.

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "compiler/ir/workload.h"
#include "target/target.h"
#include "tuned/v1/gpu_runner.pb.h"

namespace tuned::reuse {

/// The candidate a launcher is written for, and what it is named.
struct LauncherInput {
  const ir::Workload& workload;
  const target::Target& target;
  const v1::GpuCandidateProgram& program;
  std::string name;          // a C identifier: the prefix of every entry point
  std::string program_file;  // the device program's file name (OUT.cl, OUT.cubin), no folder
  std::string header_file;   // OUT.h's file name, as OUT.c includes it
  int64_t record_id = 0;
  std::string trace_hash;
};

/// One dialect's part of the launcher; WriteLauncher puts the shared frame around it.
struct LauncherText {
  std::string dialect;       // "OpenCL", "CUDA": how the files' first line names the kernels
  std::string api_header;    // the API the header includes, "CL/cl.h"
  std::string declarations;  // the header's declarations, each with its comment
  std::string definitions;   // OUT.c after its #include
};

/// The two dialects' parts: opencl_launcher.cc and cuda_launcher.cc.
LauncherText OpenclLauncher(const LauncherInput& in);
LauncherText CudaLauncher(const LauncherInput& in);

/// Writes OUT.h (include guard, the API's header, extern "C") and OUT.c (including OUT.h) of
/// `text`, both opening with a line naming the workload, target, record and trace.
Status WriteLauncher(const LauncherInput& in, const LauncherText& text,
                     const std::string& header_path, const std::string& launcher_path);

/// `bytes` written to `path` as they are.
Status WriteFileBytes(const std::string& path, const std::string& bytes);

/// `text` as a C string literal, one literal per source line.
std::string CStringLiteral(const std::string& text);
/// `bytes` as the initializer of an unsigned char array, 16 bytes a line.
std::string CByteArray(const std::string& bytes);

/// The C name of buffer `index` of a launch: the workload's arguments, then `intermediateN`.
std::string BufferName(const LauncherInput& in, uint32_t index);
/// The names of `launch`'s buffers, in its argument order.
std::vector<std::string> LaunchBufferNames(const LauncherInput& in,
                                           const v1::GpuKernelLaunch& launch);
/// A C identifier: a letter or '_', then letters, digits and '_'.
bool IsCIdentifier(const std::string& name);

/// Why the workload's argument names cannot be a launcher's C parameters, if they cannot: a name
/// that is not a C identifier, or one a launcher's own parameters and locals use (`stream`,
/// `queue`, `err`, `intermediate0`, ...), which would give C that does not compile.
Status CheckArgumentNames(const ir::Workload& workload);

/// The names of the workload's arguments: inputs, then the output.
std::vector<std::string> ArgumentNames(const LauncherInput& in);
/// "LEADING, TYPE b1, TYPE b2": fixed leading parameters, then one per buffer.
std::string ParameterList(const std::string& leading, const std::string& type,
                          const std::vector<std::string>& buffers);
/// "LEADING, b1, b2": the matching arguments.
std::string ArgumentList(const std::string& leading, const std::vector<std::string>& buffers);
/// A launch's grid or block as "(x, y, z)".
std::string Dims(const google::protobuf::RepeatedField<int64_t>& dims);

}  // namespace tuned::reuse

#endif  // TUNED_COMPILER_REUSE_GPU_GPU_LAUNCHER_H_

#ifndef TUNED_COMPILER_RUNTIME_OPENCL_PROGRAM_H_
#define TUNED_COMPILER_RUNTIME_OPENCL_PROGRAM_H_

/// \file
/// OpenCL C source built for one device.

#include <memory>
#include <string>
#include <string_view>

#include "common/status.h"
#include "compiler/runtime/opencl/device.h"

struct _cl_program;

namespace tuned::opencl {

class Program {
 public:
  /// Builds `source` for `device` (which must outlive the program) with OpenCL build `options`.
  /// A source that does not build is an InvalidArgument status with one line, the build log's
  /// first error ("<source>:3:5: error: use of undeclared identifier 'y'"): a COMPILE_ERROR.
  static StatusOr<std::unique_ptr<Program>> Build(const Device& device, std::string_view source,
                                                  std::string_view options = "");
  ~Program();
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;

  const Device& device() const { return *device_; }
  const std::string& build_log() const { return build_log_; }
  _cl_program* handle() const { return program_; }

 private:
  Program(const Device& device, _cl_program* program) : device_(&device), program_(program) {}
  const Device* device_;
  _cl_program* program_;
  std::string build_log_;
};

}  // namespace tuned::opencl

#endif  // TUNED_COMPILER_RUNTIME_OPENCL_PROGRAM_H_

#include "compiler/runtime/opencl/program.h"

#include <vector>

#include "common/compiler_log.h"
#include "compiler/runtime/opencl/opencl_internal.h"

namespace tuned::opencl {
namespace {

std::string BuildLog(cl_program program, cl_device_id device) {
  size_t size = 0;
  if (clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size) != CL_SUCCESS ||
      size == 0) {
    return "";
  }
  std::vector<char> log(size);
  if (clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr) != CL_SUCCESS) {
    return "";
  }
  return std::string(log.data());
}

}  // namespace

StatusOr<std::unique_ptr<Program>> Program::Build(const Device& device, std::string_view source,
                                                  std::string_view options) {
  std::string text(source);
  const char* sources[] = {text.c_str()};
  cl_int error = CL_SUCCESS;
  cl_program raw = clCreateProgramWithSource(device.context(), 1, sources, nullptr, &error);
  TUNED_RETURN_IF_ERROR(internal::ClCall(error, "clCreateProgramWithSource"));
  std::unique_ptr<Program> program(new Program(device, raw));
  cl_device_id id = device.id();
  error = clBuildProgram(raw, 1, &id, std::string(options).c_str(), nullptr, nullptr);
  program->build_log_ = BuildLog(raw, id);
  if (error == CL_BUILD_PROGRAM_FAILURE || error == CL_INVALID_BUILD_OPTIONS) {
    return InvalidArgumentError(FirstErrorLine(program->build_log_, internal::ClErrorName(error)));
  }
  TUNED_RETURN_IF_ERROR(internal::ClCall(error, "clBuildProgram"));
  return program;
}

Program::~Program() { clReleaseProgram(program_); }

}  // namespace tuned::opencl

// The OpenCL launcher (gpu_launcher.h): the source embedded and built for the caller's context
// and device, kernels enqueued on the caller's queue, intermediates created on its context.

#include <sstream>

#include "compiler/reuse/gpu/gpu_launcher.h"

namespace tuned::reuse {
namespace {

constexpr char kLeading[] = "cl_command_queue queue, cl_program program";

// `NAME_source` and `NAME_build`.
void WriteBuild(const LauncherInput& in, std::ostream& h, std::ostream& c) {
  const std::string& name = in.name;
  h << "/* The program source (also in " << in.program_file << "). */\n"
    << "const char* " << name << "_source(void);\n"
    << "/* Builds the program for `device` of `context`. */\n"
    << "cl_int " << name
    << "_build(cl_context context, cl_device_id device, cl_program* program);\n";
  c << "const char* " << name << "_source(void) {\n  return " << CStringLiteral(in.program.source())
    << ";\n}\n\n"
    << "cl_int " << name
    << "_build(cl_context context, cl_device_id device, cl_program* program) {\n"
    << "  const char* text = " << name << "_source();\n  cl_int err = CL_SUCCESS;\n"
    << "  *program = clCreateProgramWithSource(context, 1, &text, NULL, &err);\n"
    << "  if (err != CL_SUCCESS) return err;\n"
    << "  return clBuildProgram(*program, 1, &device, \"\", NULL, NULL);\n}\n";
}

// `NAME_<kernel>`: the arguments set, the kernel enqueued with the recorded grid and block.
void WriteKernel(const LauncherInput& in, const v1::GpuKernelLaunch& launch, std::ostream& h,
                 std::ostream& c) {
  const std::vector<std::string> buffers = LaunchBufferNames(in, launch);
  const std::string signature = "cl_int " + in.name + "_" + launch.function() + "(" +
                                ParameterList(kLeading, "cl_mem", buffers) + ")";
  h << "/* Kernel " << launch.function() << " of the program: grid " << Dims(launch.grid())
    << ", block " << Dims(launch.block()) << "; enqueued on `queue`. */\n"
    << signature << ";\n";
  c << "\n"
    << signature << " {\n"
    << "  cl_int err = CL_SUCCESS;\n"
    << "  cl_kernel kernel = clCreateKernel(program, \"" << launch.function() << "\", &err);\n"
    << "  if (err != CL_SUCCESS) return err;\n";
  for (size_t a = 0; a < buffers.size(); ++a) {
    c << "  if (err == CL_SUCCESS) err = clSetKernelArg(kernel, " << a << ", sizeof(cl_mem), &"
      << buffers[a] << ");\n";
  }
  // OpenCL counts work items where CUDA counts blocks: the global size is grid × block.
  c << "  const size_t local[3] = {" << launch.block(0) << ", " << launch.block(1) << ", "
    << launch.block(2) << "};\n"
    << "  const size_t global[3] = {" << launch.grid(0) * launch.block(0) << ", "
    << launch.grid(1) * launch.block(1) << ", " << launch.grid(2) * launch.block(2) << "};\n"
    << "  if (err == CL_SUCCESS) err = clEnqueueNDRangeKernel(queue, kernel, 3, NULL, global, "
       "local, 0, NULL, NULL);\n"
    << "  clReleaseKernel(kernel);\n  return err;\n}\n";
}

// `NAME`: intermediates created on the queue's context, every kernel in order, the
// intermediates released.
void WriteRunAll(const LauncherInput& in, std::ostream& h, std::ostream& c) {
  const std::string signature =
      "cl_int " + in.name + "(" + ParameterList(kLeading, "cl_mem", ArgumentNames(in)) + ")";
  h << "/* Every kernel in order on `queue` (the workload's buffers; intermediates are "
       "allocated). */\n"
    << signature << ";\n";
  c << "\n"
    << signature << " {\n"
    << "  cl_int err = CL_SUCCESS;\n  cl_context context;\n"
    << "  err = clGetCommandQueueInfo(queue, CL_QUEUE_CONTEXT, sizeof(context), &context, NULL);\n"
    << "  if (err != CL_SUCCESS) return err;\n";
  const int intermediates = in.program.intermediate_bytes_size();
  for (int i = 0; i < intermediates; ++i) {
    c << "  cl_mem intermediate" << i << " = clCreateBuffer(context, CL_MEM_READ_WRITE, "
      << in.program.intermediate_bytes(i)
      << ", NULL, &err);\n  if (err != CL_SUCCESS) return err;\n";
  }
  for (const v1::GpuKernelLaunch& launch : in.program.launches()) {
    c << "  if (err == CL_SUCCESS) err = " << in.name << "_" << launch.function() << "("
      << ArgumentList("queue, program", LaunchBufferNames(in, launch)) << ");\n";
  }
  for (int i = 0; i < intermediates; ++i) c << "  clReleaseMemObject(intermediate" << i << ");\n";
  c << "  return err;\n}\n";
}

}  // namespace

LauncherText OpenclLauncher(const LauncherInput& in) {
  std::ostringstream h;
  std::ostringstream c;
  WriteBuild(in, h, c);
  for (const v1::GpuKernelLaunch& launch : in.program.launches()) WriteKernel(in, launch, h, c);
  WriteRunAll(in, h, c);
  return {"OpenCL", "CL/cl.h", h.str(), c.str()};
}

}  // namespace tuned::reuse

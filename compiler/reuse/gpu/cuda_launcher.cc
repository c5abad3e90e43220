// The CUDA launcher (gpu_launcher.h), over the driver API (cuda.h): the cubin embedded and
// loaded into the caller's current context, kernels launched on the caller's stream, and
// intermediates allocated and freed in stream order (cuMemAllocAsync), so that nothing in it
// synchronizes.

#include <sstream>

#include "compiler/reuse/gpu/gpu_launcher.h"

namespace tuned::reuse {
namespace {

constexpr char kLeading[] = "CUstream stream, CUmodule module";

// `NAME_cubin`, `NAME_cubin_size` (cuda.h brings size_t) and `NAME_load`, which also looks every
// kernel up so that a cubin missing one fails at load, not at its first launch.
void WriteLoad(const LauncherInput& in, std::ostream& h, std::ostream& c) {
  const std::string& name = in.name;
  h << "/* The program as SASS for " << in.target.cuda.arch << " (also in " << in.program_file
    << "). */\n"
    << "extern const unsigned char " << name << "_cubin[];\n"
    << "extern const size_t " << name << "_cubin_size;\n"
    << "/* Loads the cubin into the current context and checks that it holds every kernel. */\n"
    << "CUresult " << name << "_load(CUmodule* module);\n";
  // Aligned as a compiled-in fatbin is: the driver reads the ELF headers in place.
  c << "_Alignas(8) const unsigned char " << name
    << "_cubin[] = " << CByteArray(in.program.binary()) << ";\n"
    << "const size_t " << name << "_cubin_size = sizeof(" << name << "_cubin);\n\n"
    << "CUresult " << name << "_load(CUmodule* module) {\n"
    << "  CUresult err = cuModuleLoadData(module, " << name << "_cubin);\n"
    << "  if (err != CUDA_SUCCESS) return err;\n"
    << "  CUfunction function;\n";
  for (const v1::GpuKernelLaunch& launch : in.program.launches()) {
    c << "  if (err == CUDA_SUCCESS) err = cuModuleGetFunction(&function, *module, \""
      << launch.function() << "\");\n";
  }
  c << "  if (err != CUDA_SUCCESS) cuModuleUnload(*module);\n  return err;\n}\n";
}

// "R registers, S bytes of static shared memory" from ptxas's report of `function`.
std::string Resources(const LauncherInput& in, const std::string& function) {
  for (const v1::KernelResourceUsage& usage : in.program.kernels()) {
    if (usage.function() == function) {
      return std::to_string(usage.registers()) + " registers, " +
             std::to_string(usage.shared_bytes()) + " bytes of static shared memory";
    }
  }
  return "no resource report";
}

// `NAME_<kernel>`: launched with the recorded grid and block. Its shared memory is declared
// static in the source, so the launch asks for no dynamic shared bytes.
void WriteKernel(const LauncherInput& in, const v1::GpuKernelLaunch& launch, std::ostream& h,
                 std::ostream& c) {
  const std::vector<std::string> buffers = LaunchBufferNames(in, launch);
  const std::string signature = "CUresult " + in.name + "_" + launch.function() + "(" +
                                ParameterList(kLeading, "CUdeviceptr", buffers) + ")";
  h << "/* Kernel " << launch.function() << " of the program: grid " << Dims(launch.grid())
    << ", block " << Dims(launch.block()) << ", " << Resources(in, launch.function())
    << "; launched on `stream`. */\n"
    << signature << ";\n";
  std::string params;
  for (const std::string& b : buffers) params += (params.empty() ? "&" : ", &") + b;
  c << "\n"
    << signature << " {\n"
    << "  CUfunction function;\n"
    << "  CUresult err = cuModuleGetFunction(&function, module, \"" << launch.function() << "\");\n"
    << "  if (err != CUDA_SUCCESS) return err;\n"
    << "  void* params[] = {" << params << "};\n"
    << "  return cuLaunchKernel(function, " << launch.grid(0) << ", " << launch.grid(1) << ", "
    << launch.grid(2) << ", " << launch.block(0) << ", " << launch.block(1) << ", "
    << launch.block(2) << ", 0, stream, params, NULL);\n}\n";
}

// `NAME`: intermediates allocated on the stream, every kernel in order, the intermediates freed
// on the stream (after the kernels that use them, in stream order).
void WriteRunAll(const LauncherInput& in, std::ostream& h, std::ostream& c) {
  const std::string signature =
      "CUresult " + in.name + "(" + ParameterList(kLeading, "CUdeviceptr", ArgumentNames(in)) + ")";
  h << "/* Every kernel in order on `stream` (the workload's buffers; intermediates are\n"
    << "   allocated and freed on the stream). */\n"
    << signature << ";\n";
  c << "\n" << signature << " {\n  CUresult err = CUDA_SUCCESS;\n";
  const int intermediates = in.program.intermediate_bytes_size();
  for (int i = 0; i < intermediates; ++i) {
    c << "  CUdeviceptr intermediate" << i << " = 0;\n"
      << "  if (err == CUDA_SUCCESS) err = cuMemAllocAsync(&intermediate" << i << ", "
      << in.program.intermediate_bytes(i) << ", stream);\n";
  }
  for (const v1::GpuKernelLaunch& launch : in.program.launches()) {
    c << "  if (err == CUDA_SUCCESS) err = " << in.name << "_" << launch.function() << "("
      << ArgumentList("stream, module", LaunchBufferNames(in, launch)) << ");\n";
  }
  for (int i = 0; i < intermediates; ++i) {
    c << "  if (intermediate" << i << " != 0) {\n"
      << "    CUresult freed = cuMemFreeAsync(intermediate" << i << ", stream);\n"
      << "    if (err == CUDA_SUCCESS) err = freed;\n  }\n";
  }
  c << "  return err;\n}\n";
}

}  // namespace

LauncherText CudaLauncher(const LauncherInput& in) {
  std::ostringstream h;
  std::ostringstream c;
  WriteLoad(in, h, c);
  for (const v1::GpuKernelLaunch& launch : in.program.launches()) WriteKernel(in, launch, h, c);
  WriteRunAll(in, h, c);
  return {"CUDA", "cuda.h", h.str(), c.str()};
}

}  // namespace tuned::reuse

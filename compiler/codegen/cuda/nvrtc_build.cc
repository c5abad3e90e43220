// BuildCuda through NVRTC. nvrtc.h stays in this file; nvrtcResult becomes a Status here only.

#include <nvrtc.h>

#include <chrono>
#include <memory>

#include "common/compiler_log.h"
#include "compiler/codegen/cuda/cubin.h"
#include "compiler/codegen/cuda/cuda_build.h"

namespace tuned::codegen::cuda {
namespace {

// A failed NVRTC call other than the compilation itself: a broken toolkit, not bad source.
Status NvrtcCall(nvrtcResult result, std::string_view what) {
  if (result == NVRTC_SUCCESS) return Status::Ok();
  return InternalError("nvrtc: " + std::string(what) + ": " + nvrtcGetErrorString(result));
}

struct ProgramDeleter {
  void operator()(nvrtcProgram program) const { nvrtcDestroyProgram(&program); }
};
using Program = std::unique_ptr<std::remove_pointer_t<nvrtcProgram>, ProgramDeleter>;

// "sm_90" -> 90; the target parser only lets known "sm_<digits>" names through.
int SmNumber(const std::string& arch) { return std::stoi(arch.substr(arch.find('_') + 1)); }

// Refuses an arch this NVRTC has dropped (CUDA 13 starts at sm_75) before compiling, naming the
// ones it has.
Status CheckArchSupported(const std::string& arch) {
  int count = 0;
  TUNED_RETURN_IF_ERROR(NvrtcCall(nvrtcGetNumSupportedArchs(&count), "nvrtcGetNumSupportedArchs"));
  std::vector<int> archs(count);
  TUNED_RETURN_IF_ERROR(NvrtcCall(nvrtcGetSupportedArchs(archs.data()), "nvrtcGetSupportedArchs"));
  std::string known;
  for (int sm : archs) {
    if (sm == SmNumber(arch)) return Status::Ok();
    known += (known.empty() ? "sm_" : ", sm_") + std::to_string(sm);
  }
  return InvalidArgumentError("NVRTC " + NvrtcVersion() + " cannot compile for " + arch +
                              " (it supports " + known + ")");
}

std::vector<std::string> NvrtcOptions(const std::string& arch, const CudaBuildOptions& options) {
  // A real arch (sm_XX, not compute_XX) makes NVRTC run ptxas and give SASS.
  std::vector<std::string> out = {"--gpu-architecture=" + arch, "--ptxas-options=-v"};
  if (options.fast_math) {
    out.push_back("--use_fast_math");
  } else {
    // NVRTC's defaults, spelled out so the recorded options say what the numbers mean.
    out.insert(out.end(), {"--ftz=false", "--prec-div=true", "--prec-sqrt=true"});
  }
  if (options.max_registers > 0) out.push_back("--maxrregcount=" + std::to_string(options.max_registers));
  return out;
}

std::string ProgramLog(nvrtcProgram program) {
  size_t size = 0;
  if (nvrtcGetProgramLogSize(program, &size) != NVRTC_SUCCESS || size == 0) return "";
  std::string log(size, '\0');
  if (nvrtcGetProgramLog(program, log.data()) != NVRTC_SUCCESS) return "";
  log.resize(size - 1);  // the size counts the terminating NUL
  return log;
}

}  // namespace

const KernelResources* CudaBuild::FindKernel(std::string_view name) const {
  for (const KernelResources& kernel : kernels) {
    if (kernel.name == name) return &kernel;
  }
  return nullptr;
}

std::string NvrtcVersion() {
  int major = 0, minor = 0;
  if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS) return "unknown";
  return std::to_string(major) + "." + std::to_string(minor);
}

StatusOr<CudaBuild> BuildCuda(std::string_view source, const target::Target& target,
                              const CudaBuildOptions& options) {
  if (target.kind != target::TargetKind::kCuda) {
    return InvalidArgumentError("a CUDA build needs a cuda target, not '" + target.ToString() + "'");
  }
  CudaBuild build;
  build.arch = target.cuda.arch;
  TUNED_RETURN_IF_ERROR(CheckArchSupported(build.arch));
  build.options = NvrtcOptions(build.arch, options);

  nvrtcProgram raw = nullptr;
  std::string text(source);
  TUNED_RETURN_IF_ERROR(NvrtcCall(
      nvrtcCreateProgram(&raw, text.c_str(), options.source_name.c_str(), 0, nullptr, nullptr),
      "nvrtcCreateProgram"));
  Program program(raw);
  std::vector<const char*> argv;
  for (const std::string& option : build.options) argv.push_back(option.c_str());

  auto start = std::chrono::steady_clock::now();
  nvrtcResult compiled = nvrtcCompileProgram(program.get(), static_cast<int>(argv.size()), argv.data());
  build.compile_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  build.log = ProgramLog(program.get());
  if (compiled != NVRTC_SUCCESS) {
    return InvalidArgumentError(FirstErrorLine(build.log, nvrtcGetErrorString(compiled)));
  }

  size_t size = 0;
  TUNED_RETURN_IF_ERROR(NvrtcCall(nvrtcGetCUBINSize(program.get(), &size), "nvrtcGetCUBINSize"));
  build.cubin.resize(size);
  TUNED_RETURN_IF_ERROR(NvrtcCall(nvrtcGetCUBIN(program.get(), build.cubin.data()), "nvrtcGetCUBIN"));
  // The promise of this library: SASS for exactly the target's arch, nothing left to JIT.
  StatusOr<std::string> cubin_arch = CubinArch(build.cubin);
  if (!cubin_arch.ok()) return InternalError("NVRTC gave no usable cubin: " + cubin_arch.status().message());
  if (*cubin_arch != build.arch) {
    return InternalError("NVRTC gave a cubin for " + *cubin_arch + ", not " + build.arch);
  }
  build.kernels = ParsePtxasReport(build.log);
  return build;
}

}  // namespace tuned::codegen::cuda

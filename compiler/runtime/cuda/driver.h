#ifndef TUNED_COMPILER_RUNTIME_CUDA_DRIVER_H_
#define TUNED_COMPILER_RUNTIME_CUDA_DRIVER_H_

/// \file
/// The CUDA driver API, loaded at run time (dlopen of libcuda.so.1) rather than linked: a
/// machine without an NVIDIA driver (a build host, CI) can hold and start the programs that
/// use it, and they say in one line that there is no driver instead of failing to load. Only
/// the functions tuned calls are looked up, each under the versioned name cuda.h maps it to
/// (cuMemAlloc is cuMemAlloc_v2), so calls through the table mean what they mean in cuda.h.

#include <cuda.h>

#include <string_view>

#include "common/status.h"

namespace tuned::cuda {

#define TUNED_CUDA_DRIVER_FUNCTIONS(X)                                                                         \
  X(cuInit) X(cuDriverGetVersion) X(cuGetErrorName) X(cuGetErrorString) X(cuDeviceGetCount) X(cuDeviceGet)    \
  X(cuDeviceGetName) X(cuDeviceGetAttribute) X(cuDeviceTotalMem) X(cuDevicePrimaryCtxRetain)                 \
  X(cuDevicePrimaryCtxRelease) X(cuCtxSetCurrent) X(cuCtxSynchronize) X(cuStreamCreate) X(cuStreamDestroy)    \
  X(cuStreamSynchronize) X(cuMemAlloc) X(cuMemFree) X(cuMemcpyHtoD) X(cuMemcpyDtoH) X(cuMemsetD8)            \
  X(cuMemsetD8Async) X(cuModuleLoadData) X(cuModuleUnload) X(cuModuleGetFunction) X(cuFuncGetAttribute)       \
  X(cuLaunchKernel) X(cuEventCreate) X(cuEventDestroy) X(cuEventRecord) X(cuEventSynchronize)                 \
  X(cuEventElapsedTime)

/// The driver's functions, by their cuda.h names.
struct Driver {
#define TUNED_CUDA_DRIVER_MEMBER(fn) decltype(&::fn) fn = nullptr;
  TUNED_CUDA_DRIVER_FUNCTIONS(TUNED_CUDA_DRIVER_MEMBER)
#undef TUNED_CUDA_DRIVER_MEMBER
};

/// The driver, loaded and initialized (cuInit) once per process. Unavailable when there is no
/// libcuda.so.1 ("no CUDA driver on this machine: ..."), when it lacks a function (a driver
/// older than the toolkit tuned was built with) or when cuInit fails (no usable device).
StatusOr<const Driver*> LoadDriver();

/// Ok for CUDA_SUCCESS; otherwise Internal "WHAT: CUDA_ERROR_NAME (the driver's description)".
Status Check(const Driver& driver, CUresult result, std::string_view what);

}  // namespace tuned::cuda

#endif  // TUNED_COMPILER_RUNTIME_CUDA_DRIVER_H_

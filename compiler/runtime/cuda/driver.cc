#include "compiler/runtime/cuda/driver.h"

#include <dlfcn.h>

#include <string>

namespace tuned::cuda {
namespace {

// The symbol cuda.h maps a name to: TUNED_CUDA_SYMBOL(cuMemAlloc) is "cuMemAlloc_v2".
#define TUNED_CUDA_STRINGIFY(x) #x
#define TUNED_CUDA_SYMBOL(fn) TUNED_CUDA_STRINGIFY(fn)

StatusOr<Driver> Open() {
  void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* reason = dlerror();
    return UnavailableError(std::string("no CUDA driver on this machine: ") + (reason != nullptr ? reason : "libcuda.so.1"));
  }
  Driver driver;
  std::string missing;
#define TUNED_CUDA_DRIVER_LOOKUP(fn)                                                            \
  driver.fn = reinterpret_cast<decltype(driver.fn)>(dlsym(library, TUNED_CUDA_SYMBOL(fn)));    \
  if (driver.fn == nullptr) missing += std::string(missing.empty() ? "" : ", ") + TUNED_CUDA_SYMBOL(fn);
  TUNED_CUDA_DRIVER_FUNCTIONS(TUNED_CUDA_DRIVER_LOOKUP)
#undef TUNED_CUDA_DRIVER_LOOKUP
  if (!missing.empty()) {
    return UnavailableError("the CUDA driver (libcuda.so.1) lacks " + missing + ": it is older than CUDA " +
                            std::to_string(CUDA_VERSION / 1000) + "." + std::to_string(CUDA_VERSION % 1000 / 10) +
                            ", which tuned was built with");
  }
  if (CUresult r = driver.cuInit(0); r != CUDA_SUCCESS) {
    Status failed = Check(driver, r, "cuInit");
    return UnavailableError("the CUDA driver cannot start: " + failed.message());
  }
  return driver;
}

}  // namespace

StatusOr<const Driver*> LoadDriver() {
  // The library stays loaded for the process's life: the table points into it.
  static const StatusOr<Driver>* const driver = new StatusOr<Driver>(Open());
  if (!driver->ok()) return driver->status();
  return &driver->value();
}

Status Check(const Driver& driver, CUresult result, std::string_view what) {
  if (result == CUDA_SUCCESS) return Status::Ok();
  const char* name = nullptr;
  const char* text = nullptr;
  driver.cuGetErrorName(result, &name);
  driver.cuGetErrorString(result, &text);
  return InternalError(std::string(what) + ": " + (name != nullptr ? name : "CUDA error " + std::to_string(int(result))) +
                       (text != nullptr ? std::string(" (") + text + ")" : std::string()));
}

}  // namespace tuned::cuda

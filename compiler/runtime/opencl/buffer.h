#ifndef TUNED_COMPILER_RUNTIME_OPENCL_BUFFER_H_
#define TUNED_COMPILER_RUNTIME_OPENCL_BUFFER_H_

/// \file
/// Global memory on an OpenCL device, copied to and from the host with blocking transfers.

#include <cstddef>

#include "common/status.h"
#include "compiler/runtime/opencl/device.h"

struct _cl_mem;

namespace tuned::opencl {

class Buffer {
 public:
  /// `bytes` (> 0) of device memory on `device`, which must outlive the buffer.
  static StatusOr<Buffer> Create(const Device& device, size_t bytes);
  Buffer(Buffer&& other) noexcept;
  Buffer& operator=(Buffer&& other) noexcept;
  ~Buffer();

  size_t bytes() const { return bytes_; }
  /// Copies `bytes` (at most the buffer's size) from `data` to the start of the buffer.
  Status Write(const void* data, size_t bytes);
  /// Copies `bytes` (at most the buffer's size) from the start of the buffer to `data`.
  Status Read(void* data, size_t bytes) const;

  _cl_mem* handle() const { return mem_; }

 private:
  Buffer(const Device& device, _cl_mem* mem, size_t bytes) : device_(&device), mem_(mem), bytes_(bytes) {}
  Status CheckSize(size_t bytes, const char* what) const;
  const Device* device_ = nullptr;
  _cl_mem* mem_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace tuned::opencl

#endif  // TUNED_COMPILER_RUNTIME_OPENCL_BUFFER_H_

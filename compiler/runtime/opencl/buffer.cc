#include "compiler/runtime/opencl/buffer.h"

#include <utility>

#include "compiler/runtime/opencl/opencl_internal.h"

namespace tuned::opencl {

StatusOr<Buffer> Buffer::Create(const Device& device, size_t bytes) {
  if (bytes == 0) return InvalidArgumentError("an OpenCL buffer needs at least one byte");
  cl_int error = CL_SUCCESS;
  cl_mem mem = clCreateBuffer(device.context(), CL_MEM_READ_WRITE, bytes, nullptr, &error);
  TUNED_RETURN_IF_ERROR(internal::ClCall(error, "clCreateBuffer of " + std::to_string(bytes) + " bytes"));
  return Buffer(device, mem, bytes);
}

Buffer::Buffer(Buffer&& other) noexcept
    : device_(other.device_), mem_(std::exchange(other.mem_, nullptr)), bytes_(other.bytes_) {}

Buffer& Buffer::operator=(Buffer&& other) noexcept {
  if (this != &other) {
    if (mem_ != nullptr) clReleaseMemObject(mem_);
    device_ = other.device_;
    mem_ = std::exchange(other.mem_, nullptr);
    bytes_ = other.bytes_;
  }
  return *this;
}

Buffer::~Buffer() {
  if (mem_ != nullptr) clReleaseMemObject(mem_);
}

Status Buffer::CheckSize(size_t bytes, const char* what) const {
  if (bytes <= bytes_) return Status::Ok();
  return OutOfRangeError(std::string(what) + " of " + std::to_string(bytes) +
                         " bytes does not fit a buffer of " + std::to_string(bytes_));
}

Status Buffer::Write(const void* data, size_t bytes) {
  TUNED_RETURN_IF_ERROR(CheckSize(bytes, "write"));
  return internal::ClCall(
      clEnqueueWriteBuffer(device_->queue(), mem_, CL_TRUE, 0, bytes, data, 0, nullptr, nullptr),
      "clEnqueueWriteBuffer");
}

Status Buffer::Read(void* data, size_t bytes) const {
  TUNED_RETURN_IF_ERROR(CheckSize(bytes, "read"));
  return internal::ClCall(
      clEnqueueReadBuffer(device_->queue(), mem_, CL_TRUE, 0, bytes, data, 0, nullptr, nullptr),
      "clEnqueueReadBuffer");
}

}  // namespace tuned::opencl

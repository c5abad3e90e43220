#ifndef TUNED_COMPILER_RUNTIME_ALIGNED_BUFFER_H_
#define TUNED_COMPILER_RUNTIME_ALIGNED_BUFFER_H_

/// \file
/// Host memory for kernel arguments with the alignment generated code assumes
/// (runtime::kBufferAlignment = 64 bytes). Every caller of a generated kernel allocates its
/// buffers through this class (or guarantees the same alignment itself).

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>

namespace tuned::runtime {

class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  /// `bytes` of zero-initialised memory aligned to 64 bytes.
  explicit AlignedBuffer(size_t bytes);

  void* data() { return data_.get(); }
  const void* data() const { return data_.get(); }
  template <typename T>
  T* as() {
    return static_cast<T*>(data());
  }
  template <typename T>
  const T* as() const {
    return static_cast<const T*>(data());
  }
  size_t size() const { return bytes_; }

 private:
  struct Free {
    void operator()(void* p) const { std::free(p); }
  };
  std::unique_ptr<void, Free> data_;
  size_t bytes_ = 0;
};

}  // namespace tuned::runtime

#endif  // TUNED_COMPILER_RUNTIME_ALIGNED_BUFFER_H_

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
#include <new>
#include <type_traits>
#include <utility>

namespace tuned::runtime {

/// Buffers of this size or more are aligned to it and placed on transparent huge pages.
inline constexpr size_t kHugePageBytes = size_t(2) << 20;

/// `bytes` (rounded up to a whole number of alignment units, at least one) of uninitialised
/// memory aligned to 64 bytes, freed with FreeAligned; nullptr when there is none. A buffer of
/// kHugePageBytes or more is rounded up to whole huge pages, asks the kernel for them, and is a
/// mapping of its own that FreeAligned keeps for the next buffer of its size (up to
/// kMaxIdleLargeBytes of them): a model run allocates the same tensors again.
void* TryAllocateAligned(size_t bytes);

/// TryAllocateAligned that throws std::bad_alloc when there is no memory.
void* AllocateAligned(size_t bytes);

/// Frees memory from TryAllocateAligned (nullptr: nothing).
void FreeAligned(void* ptr);

/// The most bytes of freed large buffers kept mapped for reuse; past it they are unmapped.
inline constexpr size_t kMaxIdleLargeBytes = size_t(1) << 30;

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
    void operator()(void* p) const { FreeAligned(p); }
  };
  std::unique_ptr<void, Free> data_;
  size_t bytes_ = 0;
};

/// The same alignment for a std::vector's elements (std::vector<float, AlignedAllocator<float>>),
/// so values a caller keeps in vectors go to a generated kernel without a copy.
template <typename T>
struct AlignedAllocator {
  using value_type = T;
  AlignedAllocator() = default;
  template <typename U>
  AlignedAllocator(const AlignedAllocator<U>&) {}
  T* allocate(size_t n) { return static_cast<T*>(AllocateAligned(n * sizeof(T))); }
  void deallocate(T* p, size_t) { FreeAligned(p); }
  // A vector sized by a count leaves its elements uninitialised, as an inference engine's arena
  // leaves a kernel's output: the kernel writes every element, and zeroing first both costs a pass
  // over the tensor and leaves it dirty in the calling core's cache for the kernel's other threads.
  template <typename U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
  friend bool operator==(const AlignedAllocator&, const AlignedAllocator&) { return true; }
  friend bool operator!=(const AlignedAllocator&, const AlignedAllocator&) { return false; }
};

}  // namespace tuned::runtime

#endif  // TUNED_COMPILER_RUNTIME_ALIGNED_BUFFER_H_

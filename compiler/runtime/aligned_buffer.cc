#include "compiler/runtime/aligned_buffer.h"

#include <algorithm>
#include <cstring>
#include <new>

#include "compiler/runtime/parallel.h"

namespace tuned::runtime {

namespace {

size_t Rounded(size_t bytes) {
  return std::max<size_t>((bytes + kBufferAlignment - 1) / kBufferAlignment, 1) * kBufferAlignment;
}

}  // namespace

void* AllocateAligned(size_t bytes) {
  void* ptr = std::aligned_alloc(kBufferAlignment, Rounded(bytes));
  if (ptr == nullptr) throw std::bad_alloc();
  return ptr;
}

AlignedBuffer::AlignedBuffer(size_t bytes) : bytes_(bytes) {
  void* ptr = AllocateAligned(bytes);
  std::memset(ptr, 0, Rounded(bytes));
  data_.reset(ptr);
}

}  // namespace tuned::runtime

#include "compiler/runtime/aligned_buffer.h"

#include <algorithm>
#include <cstring>
#include <new>

#include "compiler/runtime/parallel.h"

namespace tuned::runtime {

AlignedBuffer::AlignedBuffer(size_t bytes) : bytes_(bytes) {
  size_t rounded = std::max<size_t>((bytes + kBufferAlignment - 1) / kBufferAlignment, 1) *
                   kBufferAlignment;
  void* ptr = std::aligned_alloc(kBufferAlignment, rounded);
  if (ptr == nullptr) throw std::bad_alloc();
  std::memset(ptr, 0, rounded);
  data_.reset(ptr);
}

}  // namespace tuned::runtime

#ifndef TUNED_COMPILER_RUNTIME_PACKED_CONSTANTS_H_
#define TUNED_COMPILER_RUNTIME_PACKED_CONSTANTS_H_

/// \file
/// The packed buffers of a kernel that has a prepack entry (lower::LoweredFunc::prepack: a
/// weight its schedule lays out once), kept per set of constant inputs, by their addresses.
/// The first call with a set fills new buffers through the prepack entry; later calls reuse
/// them. A constant input must therefore keep its values while its address is passed, as an
/// engine's weights do. Used by `tuned::Kernel::Run` and `tuned run-model`.

#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

#include "compiler/runtime/aligned_buffer.h"

namespace tuned::runtime {

class PackedConstants {
 public:
  using Entry = void (*)(void* const* args);

  /// `constant_inputs`: per kernel input, whether it is constant; `packed_bytes`: the size of
  /// each packed buffer, in argument order.
  PackedConstants(Entry prepack, std::vector<bool> constant_inputs, std::vector<uint64_t> packed_bytes);

  /// The kernel's arguments for `buffers` (its inputs, then its output, as many as
  /// constant_inputs + 1): the packed buffers made from its constant inputs go before the
  /// output. Thread-safe; the prepack runs inside this call, not inside the kernel's.
  std::vector<void*> Arguments(const std::vector<void*>& buffers);

 private:
  Entry prepack_;
  std::vector<bool> constant_inputs_;
  std::vector<uint64_t> packed_bytes_;
  std::mutex mu_;
  std::map<std::vector<const void*>, std::vector<AlignedBuffer>> by_constants_;
};

}  // namespace tuned::runtime

#endif  // TUNED_COMPILER_RUNTIME_PACKED_CONSTANTS_H_

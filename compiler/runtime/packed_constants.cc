#include "compiler/runtime/packed_constants.h"

#include <algorithm>

namespace tuned::runtime {

PackedConstants::PackedConstants(Entry prepack, std::vector<bool> constant_inputs, std::vector<uint64_t> packed_bytes)
    : prepack_(prepack), constant_inputs_(std::move(constant_inputs)), packed_bytes_(std::move(packed_bytes)) {}

std::vector<void*> PackedConstants::Arguments(const std::vector<void*>& buffers) {
  const size_t inputs = constant_inputs_.size();
  std::vector<const void*> constants;
  for (size_t i = 0; i < inputs; ++i) {
    if (constant_inputs_[i]) constants.push_back(buffers[i]);
  }
  std::vector<void*> args(buffers.begin(), buffers.begin() + long(inputs));
  std::lock_guard lock(mu_);
  auto [packed, fresh] = by_constants_.try_emplace(std::move(constants));
  if (fresh) {
    for (uint64_t bytes : packed_bytes_) packed->second.emplace_back(std::max<uint64_t>(bytes, 1));
  }
  for (AlignedBuffer& buffer : packed->second) args.push_back(buffer.data());
  args.push_back(buffers.back());
  if (fresh) prepack_(args.data());
  return args;
}

}  // namespace tuned::runtime

#include "target/target.h"

#include <algorithm>

namespace tuned::target {

std::string_view KindName(TargetKind kind) {
  switch (kind) {
    case TargetKind::kLlvmCpu:
      return "llvm";
    case TargetKind::kCuda:
      return "cuda";
  }
  return "unknown";
}

std::string Target::FeatureString() const {
  std::string out;
  for (const std::string& f : features) {
    if (!out.empty()) out += ",";
    out += f;
  }
  return out;
}

bool Target::HasFeature(std::string_view token) const {
  return std::find(features.begin(), features.end(), token) != features.end();
}

std::string Target::ToString() const {
  std::string out(KindName(kind));
  if (kind == TargetKind::kCuda) {
    out += " -arch=" + cuda.arch;
    out += " -max-threads-per-block=" + std::to_string(cuda.max_threads_per_block);
    out += " -max-shared-memory-per-block=" + std::to_string(cuda.max_shared_memory_per_block);
    out += " -warp-size=" + std::to_string(cuda.warp_size);
    return out;
  }
  if (!triple.empty()) out += " -mtriple=" + triple;
  out += " -mcpu=" + cpu;
  if (!features.empty()) out += " -mattr=" + FeatureString();
  out += " -num-cores=" + std::to_string(num_cores);
  return out;
}

}  // namespace tuned::target

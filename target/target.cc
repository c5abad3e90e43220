#include "target/target.h"

#include <algorithm>
#include <cctype>

namespace tuned::target {
namespace {

// Device names have spaces ("pthread-haswell-AMD EPYC"); the parser reads them back in quotes.
std::string QuotedIfSpaced(const std::string& value) {
  bool spaced = std::any_of(value.begin(), value.end(),
                            [](char c) { return std::isspace(static_cast<unsigned char>(c)); });
  return spaced ? "\"" + value + "\"" : value;
}

}  // namespace

std::string_view KindName(TargetKind kind) {
  switch (kind) {
    case TargetKind::kLlvmCpu:
      return "llvm";
    case TargetKind::kCuda:
      return "cuda";
    case TargetKind::kOpencl:
      return "opencl";
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
  if (kind == TargetKind::kOpencl) {
    if (!opencl.device.empty()) out += " -device=" + QuotedIfSpaced(opencl.device);
    if (opencl.max_work_group_size > 0) {
      out += " -max-work-group-size=" + std::to_string(opencl.max_work_group_size);
    }
    if (opencl.local_memory_bytes > 0) {
      out += " -local-memory-bytes=" + std::to_string(opencl.local_memory_bytes);
    }
    if (opencl.sub_group_size > 0) out += " -sub-group-size=" + std::to_string(opencl.sub_group_size);
    return out;
  }
  if (!triple.empty()) out += " -mtriple=" + triple;
  out += " -mcpu=" + cpu;
  if (!features.empty()) out += " -mattr=" + FeatureString();
  out += " -num-cores=" + std::to_string(num_cores);
  return out;
}

}  // namespace tuned::target

// The one parser of target strings (see target.h for the grammar).

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <charconv>
#include <map>
#include <sstream>
#include <string>

#include "target/cuda_arch.h"
#include "target/target.h"

namespace tuned::target {
namespace {

constexpr int kMaxCores = 4096;

struct Option {
  std::string key;    // "-mcpu"
  std::string value;  // "znver3"
};

// The next word of `text` from `pos`: runs of non-space characters, where a double-quoted part
// may hold spaces (`-device="pthread-haswell-AMD EPYC"`); the quotes are dropped.
StatusOr<std::string> NextWord(std::string_view text, size_t& pos) {
  std::string word;
  bool quoted = false;
  for (; pos < text.size(); ++pos) {
    char c = text[pos];
    if (c == '"') {
      quoted = !quoted;
    } else if (!quoted && std::isspace(static_cast<unsigned char>(c))) {
      break;
    } else {
      word += c;
    }
  }
  if (quoted) return InvalidArgumentError("unterminated quote in '" + word + "'");
  return word;
}

// Splits "-key=value" words after the kind; every option needs a value.
StatusOr<std::vector<Option>> SplitOptions(std::string_view text, size_t pos) {
  std::vector<Option> options;
  while (true) {
    while (pos < text.size() && std::isspace(static_cast<unsigned char>(text[pos]))) ++pos;
    if (pos == text.size()) break;
    TUNED_ASSIGN_OR_RETURN(std::string word, NextWord(text, pos));
    size_t eq = word.find('=');
    std::string key = word.substr(0, eq);
    std::string value = eq == std::string::npos ? "" : word.substr(eq + 1);
    if (eq == std::string::npos || value.empty()) {
      return InvalidArgumentError("option '" + word + "' needs a value (" + key + "=...)");
    }
    options.push_back({std::move(key), std::move(value)});
  }
  return options;
}

StatusOr<int> ParseInt(const Option& option, int min, int max) {
  const std::string& text = option.value;
  int value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 1) {
    return InvalidArgumentError(option.key + ": '" + text + "' is not a positive integer");
  }
  if (value < min || value > max) {
    return InvalidArgumentError(option.key + ": " + text + " is outside [" + std::to_string(min) +
                                ", " + std::to_string(max) + "]");
  }
  return value;
}

// "+avx2,-fma" into `requested` (name -> on); the last mention of a name wins.
Status AddFeatures(const std::string& list, std::map<std::string, bool>& requested) {
  std::istringstream items(list);
  std::string item;
  while (std::getline(items, item, ',')) {
    if (item.size() < 2 || (item[0] != '+' && item[0] != '-')) {
      return InvalidArgumentError("feature '" + item + "' must start with + or -");
    }
    requested[item.substr(1)] = item[0] == '+';
  }
  return Status::Ok();
}

StatusOr<Target> ParseLlvmCpu(const std::vector<Option>& options) {
  Target target;
  target.kind = TargetKind::kLlvmCpu;
  std::map<std::string, bool> requested;  // sorted by name: the canonical order
  for (const Option& option : options) {
    // Only an OpenCL device name may hold spaces (it is printed quoted); LLVM's names never do.
    if (std::any_of(option.value.begin(), option.value.end(),
                    [](char c) { return std::isspace(static_cast<unsigned char>(c)); })) {
      return InvalidArgumentError(option.key + ": '" + option.value + "' may not contain spaces");
    }
    if (option.key == "-mtriple") {
      target.triple = option.value;
    } else if (option.key == "-mcpu") {
      target.cpu = option.value;
    } else if (option.key == "-mattr") {
      TUNED_RETURN_IF_ERROR(AddFeatures(option.value, requested));
    } else if (option.key == "-num-cores") {
      TUNED_ASSIGN_OR_RETURN(target.num_cores, ParseInt(option, 1, kMaxCores));
    } else {
      return InvalidArgumentError("unknown option '" + option.key +
                                  "' (expected -mtriple, -mcpu, -mattr, -num-cores)");
    }
  }
  for (const auto& [name, enabled] : requested) target.features.push_back((enabled ? "+" : "-") + name);
  return target;
}

std::string KnownArchList() {
  std::string out;
  for (std::string_view arch : KnownCudaArchs()) {
    if (!out.empty()) out += ", ";
    out += arch;
  }
  return out;
}

StatusOr<Target> ParseCuda(const std::vector<Option>& options) {
  Target target;
  target.kind = TargetKind::kCuda;
  const Option* arch = nullptr;
  for (const Option& option : options) {
    if (option.key == "-arch") arch = &option;
  }
  if (arch == nullptr) return InvalidArgumentError("option '-arch' is required (e.g. -arch=sm_90)");
  std::optional<CudaArchLimits> limits = FindCudaArch(arch->value);
  if (!limits) {
    return InvalidArgumentError("-arch: unknown CUDA architecture '" + arch->value + "' (known: " +
                                KnownArchList() + ")");
  }
  CudaAttributes& cuda = target.cuda;
  cuda.arch = arch->value;
  cuda.max_threads_per_block = limits->max_threads_per_block;
  cuda.max_shared_memory_per_block = limits->default_shared_memory_per_block;
  cuda.warp_size = limits->warp_size;
  for (const Option& option : options) {
    if (option.key == "-arch") continue;
    if (option.key == "-max-threads-per-block") {
      TUNED_ASSIGN_OR_RETURN(cuda.max_threads_per_block,
                             ParseInt(option, 1, limits->max_threads_per_block));
    } else if (option.key == "-max-shared-memory-per-block") {
      TUNED_ASSIGN_OR_RETURN(cuda.max_shared_memory_per_block,
                             ParseInt(option, 1, limits->max_shared_memory_per_block));
    } else if (option.key == "-warp-size") {
      TUNED_ASSIGN_OR_RETURN(cuda.warp_size, ParseInt(option, limits->warp_size, limits->warp_size));
    } else {
      return InvalidArgumentError("unknown option '" + option.key +
                                  "' (expected -arch, -max-threads-per-block, "
                                  "-max-shared-memory-per-block, -warp-size)");
    }
  }
  return target;
}

// Sanity bounds only: the device's own limits are checked where the device is known
// (opencl::ResolveTarget).
constexpr int kMaxOpenclWorkGroupSize = 1 << 16;
constexpr int kMaxOpenclLocalMemoryBytes = 1 << 30;
constexpr int kMaxOpenclSubGroupSize = 1024;

StatusOr<Target> ParseOpencl(const std::vector<Option>& options) {
  Target target;
  target.kind = TargetKind::kOpencl;
  OpenclAttributes& opencl = target.opencl;
  for (const Option& option : options) {
    if (option.key == "-device") {
      opencl.device = option.value;
    } else if (option.key == "-max-work-group-size") {
      TUNED_ASSIGN_OR_RETURN(opencl.max_work_group_size,
                             ParseInt(option, 1, kMaxOpenclWorkGroupSize));
    } else if (option.key == "-local-memory-bytes") {
      TUNED_ASSIGN_OR_RETURN(opencl.local_memory_bytes,
                             ParseInt(option, 1, kMaxOpenclLocalMemoryBytes));
    } else if (option.key == "-sub-group-size") {
      TUNED_ASSIGN_OR_RETURN(opencl.sub_group_size, ParseInt(option, 1, kMaxOpenclSubGroupSize));
    } else {
      return InvalidArgumentError("unknown option '" + option.key +
                                  "' (expected -device, -max-work-group-size, "
                                  "-local-memory-bytes, -sub-group-size)");
    }
  }
  return target;
}

// Printable ASCII and white space only: a target string is a key of the log, printed in errors
// and tables, so a NUL or another control byte in it would be a key nobody can type.
Status CheckCharacters(std::string_view text) {
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if ((c < 0x20 && !std::isspace(c)) || c >= 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02x", c);
      return InvalidArgumentError("byte " + std::string(hex) + " at offset " + std::to_string(i) +
                                  " is not a printable ASCII character");
    }
  }
  return Status::Ok();
}

StatusOr<Target> ParseWords(std::string_view text) {
  TUNED_RETURN_IF_ERROR(CheckCharacters(text));
  size_t pos = 0;
  while (pos < text.size() && std::isspace(static_cast<unsigned char>(text[pos]))) ++pos;
  TUNED_ASSIGN_OR_RETURN(std::string kind, NextWord(text, pos));
  TUNED_ASSIGN_OR_RETURN(std::vector<Option> options, SplitOptions(text, pos));
  if (kind == KindName(TargetKind::kLlvmCpu)) return ParseLlvmCpu(options);
  if (kind == KindName(TargetKind::kCuda)) return ParseCuda(options);
  if (kind == KindName(TargetKind::kOpencl)) return ParseOpencl(options);
  if (kind.empty()) return InvalidArgumentError("empty (expected llvm ..., cuda ... or opencl ...)");
  return InvalidArgumentError("unknown kind '" + kind + "' (expected llvm, cuda or opencl)");
}

}  // namespace

StatusOr<Target> ParseTarget(std::string_view text) {
  StatusOr<Target> target = ParseWords(text);
  if (!target.ok()) {
    std::string shown(text);  // bytes CheckCharacters refuses are shown as '?': one clean line
    for (char& c : shown) {
      const unsigned char u = static_cast<unsigned char>(c);
      if (u < 0x20 || u >= 0x7f) c = '?';
    }
    return target.status().WithContext("target '" + shown + "'");
  }
  return target;
}

}  // namespace tuned::target

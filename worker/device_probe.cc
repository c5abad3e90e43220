#include "worker/device_probe.h"

#include <unistd.h>

#include <fstream>
#include <set>
#include <sstream>

#include "compiler/codegen/llvm/codegen_llvm.h"

namespace tuned::worker {
namespace {

// CPU flags that change what generated code may use or how fast it runs; the full flag list
// (100+ entries of virtualisation and security bits) would only add noise to every record.
const std::set<std::string>& RelevantFeatures() {
  static const std::set<std::string> features = {
      "sse4_1",   "sse4_2",   "avx",          "avx2",        "fma",        "f16c",
      "avx512f",  "avx512bw", "avx512dq",     "avx512vl",    "avx512_vnni", "avx512_bf16",
      "avx512_fp16", "amx_tile", "amx_bf16", "amx_int8",     "avx_vnni",   "neon",
      "asimd",    "sve",      "sve2"};
  return features;
}

// "Key : value" of the first cpuinfo line whose key is `key`.
std::string CpuInfoField(const std::string& key) {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string name = line.substr(0, colon);
    while (!name.empty() && (name.back() == ' ' || name.back() == '\t')) name.pop_back();
    if (name != key) continue;
    size_t start = line.find_first_not_of(' ', colon + 1);
    return start == std::string::npos ? "" : line.substr(start);
  }
  return "";
}

std::string ReadLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// "32K" / "1024K" / "32M" → bytes.
uint64_t ParseCacheSize(const std::string& text) {
  if (text.empty()) return 0;
  uint64_t value = 0;
  size_t i = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') value = value * 10 + (text[i++] - '0');
  if (i < text.size() && text[i] == 'K') value <<= 10;
  if (i < text.size() && text[i] == 'M') value <<= 20;
  return value;
}

void ProbeCaches(v1::DeviceInfo& device) {
  for (int index = 0; index < 8; ++index) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index);
    const std::string level = ReadLine(dir + "/level");
    if (level.empty()) continue;
    const std::string type = ReadLine(dir + "/type");
    const uint64_t bytes = ParseCacheSize(ReadLine(dir + "/size"));
    if (level == "1" && type == "Data") device.set_l1d_cache_bytes(bytes);
    if (level == "2" && type != "Instruction") device.set_l2_cache_bytes(bytes);
    if (level == "3" && type != "Instruction") device.set_l3_cache_bytes(bytes);
  }
}

}  // namespace

std::string CpuModelName() {
  std::string model = CpuInfoField("model name");
  if (model.empty()) model = CpuInfoField("Model");  // arm64
  return model.empty() ? "unknown cpu" : model;
}

v1::DeviceInfo ProbeCpuDevice(const target::Target& target) {
  v1::DeviceInfo device;
  device.set_model(CpuModelName());
  device.set_num_cores(static_cast<uint32_t>(target.num_cores));
  std::string flags = CpuInfoField("flags");
  if (flags.empty()) flags = CpuInfoField("Features");  // arm64
  std::istringstream words(flags);
  std::set<std::string> present;
  for (std::string word; words >> word;) {
    if (RelevantFeatures().count(word) > 0) present.insert(word);
  }
  for (const std::string& feature : present) device.add_features(feature);
  ProbeCaches(device);
  device.set_toolkit_version(codegen::LlvmToolkitVersion());
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page_size > 0) {
    device.set_memory_bytes(static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size));
  }
  return device;
}

}  // namespace tuned::worker

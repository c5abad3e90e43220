#include "worker/device_probe.h"

#include <unistd.h>

#include <fstream>
#include <set>
#include <sstream>

#include "common/cache_flush.h"
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
  const HostCaches caches = ProbeHostCaches();
  device.set_l1d_cache_bytes(caches.l1d);
  device.set_l2_cache_bytes(caches.l2);
  device.set_l3_cache_bytes(caches.l3);
  device.set_toolkit_version(codegen::LlvmToolkitVersion());
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page_size > 0) {
    device.set_memory_bytes(static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size));
  }
  return device;
}

}  // namespace tuned::worker

#ifndef TUNED_COMMON_CACHE_FLUSH_H_
#define TUNED_COMMON_CACHE_FLUSH_H_

/// \file
/// Cold runs: evicting a kernel's data from the CPU caches between timed runs. Repeated runs of
/// a kernel whose buffers exceed the last-level cache keep a part of them cached (a 64 MiB
/// reduction read at 113 GB/s, twice what this machine reads from memory), while in a model the
/// data arrives cold. The worker's protocol (worker/timing_protocol.h) and the
/// sweep's harnesses (`tuned run-model --flush-cache`, bench/sweep/) flush with these, so every
/// runtime compared is timed the same way. Header-only and dependency-free for that reason.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>

namespace tuned {

/// The data caches Linux reports for cpu 0 (sysfs), bytes; 0 where hidden. The last level is
/// the one the core shares (sysconf may count every chiplet's instead).
struct HostCaches {
  uint64_t l1d = 0, l2 = 0, l3 = 0;
  uint64_t LastLevel() const { return l3 > 0 ? l3 : l2; }
};

inline HostCaches ProbeHostCaches() {
  HostCaches caches;
  for (int index = 0; index < 8; ++index) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index);
    std::ifstream level_file(dir + "/level"), type_file(dir + "/type"), size_file(dir + "/size");
    int level = 0;
    std::string type, size;  // size: "48K", "1024K", "32M"
    if (!(level_file >> level) || !(type_file >> type) || !(size_file >> size)) continue;
    uint64_t bytes = std::strtoull(size.c_str(), nullptr, 10);
    if (size.back() == 'K') bytes <<= 10;
    if (size.back() == 'M') bytes <<= 20;
    if (level == 1 && type == "Data") caches.l1d = bytes;
    if (level == 2 && type != "Instruction") caches.l2 = bytes;
    if (level == 3 && type != "Instruction") caches.l3 = bytes;
  }
  return caches;
}

/// Bytes to read through to evict a last-level cache of `llc_bytes`: four times its size, at
/// least 256 MiB. A virtual machine may report less cache than its cores reach (this 2-core VM
/// reports 32 MiB, yet repeated runs over a 64 MiB tensor found most of it cached) and an
/// eviction policy that is not LRU keeps lines after one pass; 256 MiB read at ~40 GB/s costs
/// about 7 ms per flush.
inline size_t FlushBytes(uint64_t llc_bytes) {
  return static_cast<size_t>(std::clamp<uint64_t>(4 * llc_bytes, uint64_t{256} << 20, uint64_t{1} << 30));
}

/// Reads one byte of every cache line of `buffer`, which must have been written before (a page
/// never written reads as the kernel's one zero page and evicts nothing). Reads, not writes: a
/// write-through leaves dirty lines whose write-back the kernel's first reads wait for. Reading
/// 64 MiB (2 threads, same minute) ran at 56 GB/s after a write-through, 63-65 GB/s after this,
/// and 72 GB/s after evicting exactly its own lines (clflushopt, which needs the buffers).
inline void FlushCaches(const uint8_t* buffer, size_t bytes) {
  uint8_t sum = 0;
  for (size_t i = 0; i < bytes; i += 64) sum = static_cast<uint8_t>(sum + buffer[i]);
  volatile uint8_t sink = sum;  // keeps the loads
  (void)sink;
}

}  // namespace tuned

#endif  // TUNED_COMMON_CACHE_FLUSH_H_

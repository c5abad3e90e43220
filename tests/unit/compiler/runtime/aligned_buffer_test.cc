#include "compiler/runtime/aligned_buffer.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "compiler/runtime/parallel.h"

namespace tuned::runtime {
namespace {

// The AnonHugePages of the mapping of /proc/self/smaps that holds `address`, in KiB; -1 when no
// mapping holds it.
int64_t AnonHugePagesKiB(const void* address) {
  std::ifstream smaps("/proc/self/smaps");
  const auto target = reinterpret_cast<uintptr_t>(address);
  bool inside = false;
  std::string line;
  while (std::getline(smaps, line)) {
    uintptr_t begin = 0, end = 0;
    char dash = 0;
    std::istringstream range(line);
    if (range >> std::hex >> begin >> dash >> end && dash == '-') {
      inside = begin <= target && target < end;
      continue;
    }
    if (inside && line.rfind("AnonHugePages:", 0) == 0) return std::stoll(line.substr(14));
  }
  return -1;
}

std::string TransparentHugePageMode() {
  std::ifstream mode("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string text;
  std::getline(mode, text);
  return text;
}

TEST(AlignedBuffer, SmallBuffersAreZeroedAndCacheLineAligned) {
  AlignedBuffer buffer(1000);
  ASSERT_NE(buffer.data(), nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(buffer.data()) % kBufferAlignment, 0u);
  const auto* bytes = static_cast<const unsigned char*>(buffer.data());
  for (size_t i = 0; i < 1000; ++i) ASSERT_EQ(bytes[i], 0) << "byte " << i;
}

TEST(AlignedBuffer, LargeBuffersLieOnHugePages) {
  const size_t bytes = 4 * kHugePageBytes + 12345;
  AlignedBuffer buffer(bytes);  // zeroed, so every page is touched
  EXPECT_EQ(reinterpret_cast<uintptr_t>(buffer.data()) % kHugePageBytes, 0u);
  const std::string mode = TransparentHugePageMode();
  if (mode.empty() || mode.find("[never]") != std::string::npos) {
    GTEST_SKIP() << "transparent huge pages are off on this host (" << mode << ")";
  }
  // Four whole huge pages at least: the kernel may still refuse one when memory is fragmented.
  EXPECT_GE(AnonHugePagesKiB(buffer.data()), int64_t(kHugePageBytes >> 10))
      << "a " << bytes << "-byte buffer got no huge page (THP mode: " << mode << ")";
}

}  // namespace
}  // namespace tuned::runtime

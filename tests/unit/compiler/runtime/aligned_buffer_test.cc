#include "compiler/runtime/aligned_buffer.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "compiler/runtime/parallel.h"

namespace tuned::runtime {
namespace {

// A field ("Rss:", "AnonHugePages:") of the mapping of /proc/self/smaps that holds `address`, in
// KiB; -1 when no mapping holds it.
int64_t SmapsKiB(const void* address, const std::string& field) {
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
    if (inside && line.rfind(field, 0) == 0) return std::stoll(line.substr(field.size()));
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
  EXPECT_GE(SmapsKiB(buffer.data(), "AnonHugePages:"), int64_t(kHugePageBytes >> 10))
      << "a " << bytes << "-byte buffer got no huge page (THP mode: " << mode << ")";
}

// A kernel writes every element of its output, so a vector sized for one is not zeroed first: the
// pass would cost time and leave the tensor dirty in the allocating core's cache.
TEST(AlignedAllocator, AVectorSizedByACountLeavesItsPagesUntouched) {
  const size_t elements = 64 * kHugePageBytes / sizeof(float);
  std::vector<float, AlignedAllocator<float>> output(elements);
  ASSERT_EQ(reinterpret_cast<uintptr_t>(output.data()) % kBufferAlignment, 0u);
  const int64_t resident = SmapsKiB(output.data(), "Rss:");
  ASSERT_GE(resident, 0) << "no mapping holds the vector's elements";
  EXPECT_LT(resident, int64_t(elements * sizeof(float) >> 10) / 4)
      << "the vector's elements were written when it was sized";
  // An explicit value still initialises every element.
  std::vector<float, AlignedAllocator<float>> zeros(1000, 0.0f);
  for (size_t i = 0; i < zeros.size(); ++i) ASSERT_EQ(zeros[i], 0.0f) << "element " << i;
}

// A model run allocates the same tensors again: a freed large buffer is kept for the next of its
// size, its pages still in place, whatever was allocated in between. From the C heap, the
// outputs of `tuned run-model`'s runs of a 64 MiB add+ReLU landed 66 MiB further up the heap
// on most runs and faulted in anew inside the kernel: 5 ms runs became 80-130 ms ones.
TEST(AlignedAllocator, AFreedLargeBufferIsReusedWithItsPagesForTheNextOfItsSize) {
  const size_t elements = 3 * kHugePageBytes / sizeof(float);
  const float* first = nullptr;
  std::vector<char*> small;  // a run's other allocations
  {
    std::vector<float, AlignedAllocator<float>> output(elements, 1.0f);  // every page touched
    first = output.data();
    small.push_back(static_cast<char*>(AllocateAligned(4096)));
  }
  small.push_back(static_cast<char*>(AllocateAligned(4096)));
  std::vector<float, AlignedAllocator<float>> again(elements);
  EXPECT_EQ(again.data(), first) << "the freed buffer of the same size was not reused";
  EXPECT_GE(SmapsKiB(again.data(), "Rss:"), int64_t(elements * sizeof(float) >> 10))
      << "the reused buffer's pages were given back and must fault in again";
  // Another size gets a block of its own; small buffers and nullptr free as before.
  std::vector<float, AlignedAllocator<float>> other(elements + kHugePageBytes / sizeof(float));
  EXPECT_NE(other.data(), again.data());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(other.data()) % kHugePageBytes, 0u);
  for (char* p : small) FreeAligned(p);
  FreeAligned(nullptr);
  // The runtime's entry points for generated kernels share the allocator.
  void* scratch = tuned_runtime_alloc(int64_t(elements * sizeof(float)));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(scratch) % kHugePageBytes, 0u);
  tuned_runtime_free(scratch);
}

// Idle blocks are a cache, not a reservation: where a new mapping does not fit, they go back and
// the allocation is tried again. A child process with its address space capped runs it.
TEST(AlignedAllocator, IdleBlocksGoBackWhereANewBufferDoesNotFit) {
  const size_t idle = 160 * kHugePageBytes / 2, wanted = 200 * kHugePageBytes / 2;  // 160, 200 MiB
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // Room for the wanted buffer, not for it beside the idle one.
    std::ifstream status("/proc/self/status");
    std::string line;
    size_t mapped = 0;
    while (std::getline(status, line)) {
      if (line.rfind("VmSize:", 0) == 0) mapped = size_t(std::stoll(line.substr(7))) << 10;
    }
    const rlimit cap{mapped + wanted + 96 * kHugePageBytes / 2, mapped + wanted + 96 * kHugePageBytes / 2};
    if (mapped == 0 || setrlimit(RLIMIT_AS, &cap) != 0) _exit(2);
    FreeAligned(AllocateAligned(idle));  // kept mapped for reuse
    void* buffer = TryAllocateAligned(wanted);
    _exit(buffer != nullptr ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << (WEXITSTATUS(status) == 1 ? "the idle block was not given back"
                                                                   : "could not cap the child's address space");
}

}  // namespace
}  // namespace tuned::runtime

#include "compiler/runtime/aligned_buffer.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <new>
#include <unordered_map>

#include <pthread.h>
#include <sys/mman.h>

#include "compiler/runtime/parallel.h"

namespace tuned::runtime {

namespace {

size_t Rounded(size_t bytes) {
  return std::max<size_t>((bytes + kBufferAlignment - 1) / kBufferAlignment, 1) * kBufferAlignment;
}

// Large buffers, each a mapping of its own, kept for reuse once freed. Taken from the C heap
// (aligned_alloc to a huge page), a buffer left fragments on both sides that a run's small
// allocations took, so the same tensor allocated again found no hole and the heap grew by one
// buffer per run: every run faulted its output in anew, clearing fresh huge pages inside the
// kernel (`tuned run-model`, a 64 MiB add+ReLU: 5 ms runs became 80-130 ms ones).
class LargeBlocks {
 public:
  // A mapping of `bytes` (whole huge pages) aligned to a huge page; nullptr when there is none.
  void* Take(size_t bytes) {
    {
      std::lock_guard lock(mu_);
      if (auto it = idle_.find(bytes); it != idle_.end()) {
        void* ptr = it->second;
        idle_.erase(it);
        idle_bytes_ -= bytes;
        live_[ptr] = bytes;
        return ptr;
      }
    }
    // Mapped a huge page longer, then trimmed to the aligned part. Where memory runs out, the
    // idle blocks of other sizes go back first.
    const size_t mapped = bytes + kHugePageBytes;
    auto map = [mapped] { return mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0); };
    void* raw = map();
    if (raw == MAP_FAILED && ReleaseIdle()) raw = map();
    if (raw == MAP_FAILED) return nullptr;
    const uintptr_t begin = reinterpret_cast<uintptr_t>(raw);
    const uintptr_t aligned = (begin + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
    if (aligned > begin) munmap(raw, aligned - begin);
    if (const uintptr_t end = begin + mapped; end > aligned + bytes) {
      munmap(reinterpret_cast<void*>(aligned + bytes), end - aligned - bytes);
    }
    void* ptr = reinterpret_cast<void*>(aligned);
    // Transparent huge pages are granted on request only (the `madvise` mode Debian ships): a
    // kernel that walks a large tensor by rows or column blocks enters a new 4 KiB page every
    // few rows, and its TLB misses cost up to a fifth of a memory-bound kernel's time (softmax
    // 4096 x 4096: 4.6 -> 3.7 ms). A refusal costs nothing.
    madvise(ptr, bytes, MADV_HUGEPAGE);
    std::lock_guard lock(mu_);
    live_[ptr] = bytes;
    return ptr;
  }

  // Unmaps every idle block; false when there was none.
  bool ReleaseIdle() {
    std::multimap<size_t, void*> idle;
    {
      std::lock_guard lock(mu_);
      idle.swap(idle_);
      idle_bytes_ = 0;
    }
    for (const auto& [bytes, ptr] : idle) munmap(ptr, bytes);
    return !idle.empty();
  }

  void Lock() { mu_.lock(); }
  void Unlock() { mu_.unlock(); }

  // Takes back a block from Take; false when `ptr` is not one.
  bool Give(void* ptr) {
    size_t bytes = 0;
    {
      std::lock_guard lock(mu_);
      auto it = live_.find(ptr);
      if (it == live_.end()) return false;
      bytes = it->second;
      live_.erase(it);
      if (idle_bytes_ + bytes <= kMaxIdleLargeBytes) {
        idle_.emplace(bytes, ptr);
        idle_bytes_ += bytes;
        return true;
      }
    }
    munmap(ptr, bytes);
    return true;
  }

 private:
  std::mutex mu_;
  std::unordered_map<void*, size_t> live_;  // handed out, by address
  std::multimap<size_t, void*> idle_;       // freed, by size
  size_t idle_bytes_ = 0;
};

// Never destroyed: buffers may be freed by other static destructors at exit.
LargeBlocks& Blocks() {
  static LargeBlocks* blocks = [] {
    auto* created = new LargeBlocks;
    // A fork while another thread holds the lock (the worker forks a timing child while a
    // builder thread computes a reference's buffers) would leave the child's copy locked for
    // good: the fork waits for it instead, as malloc's own locks do.
    pthread_atfork([] { Blocks().Lock(); }, [] { Blocks().Unlock(); }, [] { Blocks().Unlock(); });
    return created;
  }();
  return *blocks;
}

}  // namespace

void* TryAllocateAligned(size_t bytes) {
  if (bytes < kHugePageBytes) return std::aligned_alloc(kBufferAlignment, Rounded(bytes));
  return Blocks().Take((bytes + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes);
}

void FreeAligned(void* ptr) {
  if (ptr == nullptr) return;
  // A large block is aligned to a huge page; other memory rarely is, and skips the lock.
  if (reinterpret_cast<uintptr_t>(ptr) % kHugePageBytes == 0 && Blocks().Give(ptr)) return;
  std::free(ptr);
}

void* AllocateAligned(size_t bytes) {
  void* ptr = TryAllocateAligned(bytes);
  if (ptr == nullptr) throw std::bad_alloc();
  return ptr;
}

AlignedBuffer::AlignedBuffer(size_t bytes) : bytes_(bytes) {
  void* ptr = AllocateAligned(bytes);
  std::memset(ptr, 0, Rounded(bytes));
  data_.reset(ptr);
}

}  // namespace tuned::runtime

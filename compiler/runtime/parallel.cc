#include "compiler/runtime/parallel.h"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>

#include "compiler/runtime/aligned_buffer.h"

namespace tuned::runtime {
namespace {

std::atomic<int32_t> thread_limit{0};

}  // namespace

void SetThreadLimit(int32_t limit) { thread_limit.store(std::max(limit, 0)); }

int32_t ThreadLimit() { return thread_limit.load(); }

int32_t MaxRuntimeThreads() { return omp_get_max_threads(); }

}  // namespace tuned::runtime

extern "C" {

void tuned_parallel_for(int64_t extent, int32_t num_threads, TunedParallelBody body,
                        void* closure) {
  if (extent <= 0) return;
  int64_t threads = std::max<int32_t>(num_threads, 1);
  int32_t limit = tuned::runtime::ThreadLimit();
  if (limit > 0) threads = std::min<int64_t>(threads, limit);
  threads = std::min(threads, extent);
  if (threads == 1 || omp_in_parallel()) {
    body(0, extent, closure);
    return;
  }
  // Static schedule: thread t runs [t * extent / T, (t + 1) * extent / T), so chunks differ by
  // at most one iteration and each thread touches one contiguous range (good for locality).
#pragma omp parallel num_threads(static_cast<int>(threads))
  {
    int64_t t = omp_get_thread_num();
    int64_t team = omp_get_num_threads();
    int64_t begin = t * extent / team;
    int64_t end = (t + 1) * extent / team;
    if (begin < end) body(begin, end, closure);
  }
}

void* tuned_runtime_alloc(int64_t bytes) {
  void* ptr = tuned::runtime::TryAllocateAligned(static_cast<size_t>(std::max<int64_t>(bytes, 0)));
  if (ptr == nullptr) {
    std::fprintf(stderr, "tuned runtime: out of memory allocating %lld bytes of kernel scratch\n",
                 static_cast<long long>(bytes));
    std::abort();
  }
  return ptr;
}

void tuned_runtime_free(void* ptr) { tuned::runtime::FreeAligned(ptr); }

}  // extern "C"

#ifndef TUNED_COMPILER_RUNTIME_PARALLEL_H_
#define TUNED_COMPILER_RUNTIME_PARALLEL_H_

/// \file
/// The parallel launch that generated CPU code calls for a `parallel` loop, and the heap
/// allocation it calls for global-scope scratch buffers. Both are plain C symbols so that JIT
/// code and object files emitted by compiler/codegen/llvm link against them without C++ name
/// mangling.
///
/// The launch runs on the OpenMP runtime the toolchain ships (libgomp with GCC, libomp with
/// clang) through `#pragma omp parallel`, i.e. GOMP_parallel / __kmpc_fork_call. Its pool of
/// threads is created once and reused; docs/codegen_llvm.md gives the
/// launch-overhead figures that decided for it over a home-made pool.

#include <cstddef>
#include <cstdint>

extern "C" {

/// Body of a parallel loop: runs iterations [begin, end) of the loop with the captured values
/// in `closure`.
using TunedParallelBody = void (*)(int64_t begin, int64_t end, void* closure);

/// Runs `body` over [0, extent), split into at most `num_threads` contiguous chunks of nearly
/// equal size, one per thread, and returns when all are done. Called from inside a parallel
/// region (a nested parallel loop), it runs the whole range on the calling thread.
void tuned_parallel_for(int64_t extent, int32_t num_threads, TunedParallelBody body,
                        void* closure);

/// Allocates `bytes` aligned to 64 bytes; aborts with a message when memory is exhausted (a
/// generated kernel has no error channel).
void* tuned_runtime_alloc(int64_t bytes);
void tuned_runtime_free(void* ptr);

}  // extern "C"

namespace tuned::runtime {

/// Alignment in bytes of every buffer handed to a generated kernel (arguments and scratch).
inline constexpr size_t kBufferAlignment = 64;

/// Caps the number of threads of every parallel launch in this process; 0 removes the cap (the
/// default: each kernel uses the thread count it was compiled for).
void SetThreadLimit(int32_t limit);
int32_t ThreadLimit();

/// The number of threads the OpenMP runtime would start by default (its pool size).
int32_t MaxRuntimeThreads();

}  // namespace tuned::runtime

#endif  // TUNED_COMPILER_RUNTIME_PARALLEL_H_

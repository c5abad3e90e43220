#ifndef TUNED_TESTS_SUPPORT_GPU_SCHEDULES_H_
#define TUNED_TESTS_SUPPORT_GPU_SCHEDULES_H_

/// \file
/// GPU schedules for tests and the NVRTC benchmark: a hand schedule of a tiled matmul with
/// shared-memory staging, and random GPU schedules for the GPU property test.

#include <cstdint>
#include <memory>

#include "compiler/schedule/schedule.h"

namespace tuned::testing {

struct MatmulTiles {
  int64_t block_m = 32, block_n = 32;    // output tile of a block
  int64_t threads_m = 16, threads_n = 16;  // threadIdx.y, threadIdx.x
  int64_t tile_k = 8;                    // reduction tile staged in shared memory
  int64_t fill_vector = 1;               // above 1: the fills copy runs this long (vectorized)
};

/// `w` (a matmul) tiled for a GPU: C's i and j split into (blockIdx, threadIdx, per-thread)
/// parts, k into (tile, inner); A and B staged through shared memory at the k tile, each filled
/// cooperatively by all threads of the block (fused, split by the block's threads, bound to
/// threadIdx.y/x, each thread copying runs of `fill_vector` elements along the innermost axis);
/// a local accumulator per thread written back under threadIdx.x.
schedule::Schedule GpuTiledMatmul(std::shared_ptr<const ir::Workload> w, const MatmulTiles& tiles = {});

/// A random GPU schedule of `w`: optional inlining, then every root block's spatial loops fused
/// and split into (blockIdx.x, threadIdx.x) with a random, possibly non-dividing, thread count;
/// reductions may get a split reduction loop, shared staging of a read buffer at a random loop
/// inside the block (filled by the block's threads, sometimes in vectorized runs of 2 or 4), a
/// local accumulator and unrolling.
schedule::Schedule RandomGpuSchedule(std::shared_ptr<const ir::Workload> w, uint64_t seed);

}  // namespace tuned::testing

#endif  // TUNED_TESTS_SUPPORT_GPU_SCHEDULES_H_

#ifndef TUNED_COSTMODEL_FEATURES_GPU_FEATURES_H_
#define TUNED_COSTMODEL_FEATURES_GPU_FEATURES_H_

/// \file
/// The GPU block of the feature vector: what the loop features cannot see of a candidate on a
/// GPU target, read from its lowered kernels (lower::gpu::GpuProgram, what the search's
/// candidate check lowers every GPU candidate to). CPU candidates leave the block zero.
///
/// Vocabulary. A *request* is one load or store site executed once by one thread (a site in a
/// loop the GPU printer turns into float2/float4 accesses, codegen::gpu::PlanVectorLoop, is one
/// request per vector, `run` elements wide; elsewhere run = 1). Its *executions* are the product
/// of the loops around it in the kernel body (a branch counts as taken) times the kernel's
/// threads (grid x block); sums and weighted means over all kernels use them. The *lane axis* is
/// the lowest threadIdx dimension with an extent above 1 (threadIdx.x whenever it is bound): the
/// one consecutive lanes of a warp step along. A *warp request* is the request of the first warp
/// of block 0 at the first iteration of every loop: each lane's flat element offset evaluated
/// (lanes 0 .. min(warp, threads per block) - 1, threadIdx x fastest), so floordiv/floormod
/// indices are measured, not guessed. Only global and shared buffers are requests (local arrays
/// are registers).
///
/// Block `gpu.`, kGpuFeatures values; counts and sizes through slog(x) = log2(|x| + 1) ("log"):
///
/// | name | meaning |
/// |---|---|
/// | kernels | kernels launched (count) |
/// | threads_per_block | log threads per block, max over kernels |
/// | blocks | log blocks per grid, max over kernels |
/// | warp_use | threads per block / (warps per block x warp size), min over kernels: 1 = no idle lanes |
/// | shared_bytes | log shared bytes per block, max over kernels |
/// | local_bytes | log bytes of local arrays per thread, max over kernels (what registers must hold) |
/// | occupancy | resident warps per SM / the SM's warps, min over kernels; resident blocks = min(by threads, by shared bytes, max blocks per SM); registers are unknown before the build and not counted, so this is an upper bound |
/// | barriers | log barriers one thread passes, summed over kernels |
/// | global_requests | log executions of global requests |
/// | global_unit, global_invariant, global_strided | fractions of global executions whose flat offset along the lane axis is unit-stride (one run after the other: stride = run), invariant (a broadcast), or anything else (analysis::AnalyzeAccess, as the CPU features) |
/// | global_sectors | mean 32-byte sectors a warp request touches, weighted by executions (1 = a broadcast or 32 contiguous bytes; 32 float32 lanes in a row: 4) |
/// | shared_requests | log executions of shared requests |
/// | shared_conflict | mean bank-conflict degree of shared warp requests, weighted by executions: the most distinct 4-byte words one of the 32 banks serves, over the fewest passes the bytes need (ceil(bytes / 128)); stride s words gives gcd(s, 32), a broadcast 1 |
/// | shared_conflict_max | the largest degree of any executed shared request (0 without any) |
/// | vector_requests | fraction of global and shared executions that are float2/float4 requests |
///
/// An offset the evaluation cannot compute (a load inside an index) counts as each lane in its
/// own sectors and banks, the worst case. No waves feature: no target states its SM count.

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/lower/gpu/gpu_program.h"

namespace tuned::costmodel {

inline constexpr int kGpuFeatures = 17;

/// What the GPU block assumes of the device. The SM figures are a conservative SM of the
/// architectures tuned targets (sm_70 and later: 2048 threads, 32 blocks, at least 96 KiB of
/// shared memory); the search (CandidateFeatureOptions) raises the SM's threads and shared bytes
/// to the target's per-block limits where those are larger, and takes the warp size from the
/// target.
struct GpuFeatureOptions {
  int warp_size = 32;
  int64_t max_threads_per_sm = 2048;
  int64_t max_blocks_per_sm = 32;
  int64_t shared_bytes_per_sm = 98304;
};

/// Names of the GPU block, in vector order, without the "gpu." prefix.
const std::vector<std::string>& GpuFeatureNames();

/// The GPU block of `program`: kGpuFeatures finite values, the same for the same program.
std::vector<float> ExtractGpuFeatures(const lower::gpu::GpuProgram& program,
                                      const GpuFeatureOptions& options = {});

}  // namespace tuned::costmodel

#endif  // TUNED_COSTMODEL_FEATURES_GPU_FEATURES_H_

#ifndef TUNED_COSTMODEL_FEATURES_FEATURES_H_
#define TUNED_COSTMODEL_FEATURES_FEATURES_H_

/// \file
/// The cost model's input: one fixed-length feature vector per lowered candidate.
///
/// Lowering gives a loop program whose stores are where the work happens (MetaSchedule's
/// PerStoreFeature, Ansor's per-BufferStore rows). Each store is analysed with its loop nest;
/// the `kTopStores` most expensive stores (most iterations, then program order) each fill one
/// block of `kStoreFeatures` values, missing stores leave their block zero, and global features
/// summarise the whole program (including the stores that did not get a block). A fixed length
/// lets the trees see one row per candidate, so no pack-sum loss is needed.
///
/// Counts and sizes go through slog(x) = log2(|x| + 1) ("log" below); flags are 0/1.
/// Wherever the code generator makes a decision (FMA contraction, unrolling, strides), the
/// feature reads the same decision from compiler/analysis, so the two cannot disagree.
/// Footprint and reuse analysis treats every index as an affine function of the enclosing loops' counters
/// (a loop whose `min` depends on outer loops contributes that dependence too); floordiv by a
/// constant divides a coefficient, floormod keeps it, min/max/select take both sides. Unique
/// footprints per dimension are min(span, product of the extents that move the index, shape).
///
/// Store block `s<i>.` (i = 0 .. kTopStores-1), 98 values:
///
/// | name | meaning |
/// |---|---|
/// | float_add, float_mul, float_fma, float_div | log float add/sub, mul, fused multiply-add pairs (exactly the pairs the code generator contracts: analysis::MatchFma; the mul is not counted again), div, over all iterations |
/// | float_cmp, float_math | log float comparisons/min/max, math intrinsics (exp, log, sqrt, tanh, fabs, sigmoid) over all iterations |
/// | int_add, int_mul, int_divmod, int_cmp | log integer add/sub, mul, div/floordiv/floormod, comparisons/min/max (index arithmetic included) over all iterations |
/// | bool_ops, select, cast | log and/or/not, selects, casts over all iterations |
/// | num_loops | number of loops around the store |
/// | iterations | log product of their extents (times the store runs) |
/// | innermost_extent | log extent of the innermost loop (0 without loops) |
/// | outer_iterations | log product of all extents but the innermost |
/// | reduce_loops | loops whose counter the store's indices do not use (reductions over them) |
/// | reduce_iterations | log product of those loops' extents |
/// | predicates | number of enclosing if-then-else (imperfect splits, padding) |
/// | is_update | 1 if the stored value reads the stored buffer (an accumulation) |
/// | vec_innermost | 1 if the innermost loop is vectorized |
/// | vec_lanes | log extent of the innermost vectorized loop |
/// | vec_loops | number of vectorized loops around the store |
/// | vec_gathers | accesses that are strided (analysis::ClassifyAccess: neither invariant nor unit stride) along the innermost vectorized loop |
/// | unroll_loops, unroll_product, unroll_innermost | `unrolled` loops the code generator copies (analysis::UnrollOf = kExplicit): count, log product of extents, 1 if the innermost loop is one |
/// | parallel_loops, parallel_extent | parallel loops: count, log product of extents |
/// | parallel_per_core | log (parallel extent / cores) |
/// | parallel_balance | parallel extent / (ceil(extent / cores) * cores): 1 = all cores busy to the end |
/// | parallel_outer_iterations | log product of serial loops outside the outermost parallel loop (parallel regions launched) |
/// | auto_unroll_max_step | log of the auto_unroll_max_step in force at the store (that of the innermost annotated loop around it) |
/// | auto_unroll_steps | log product of the extents of the loops around the store the code generator auto-unrolls (analysis::UnrollOf = kAuto; 1 when none), 0 without a budget |
/// | thread_loops, thread_extent | GPU thread-bound loops: count, log product of extents |
/// | prefetch_ahead | log of the prefetch_ahead in force at the store (that of the innermost annotated loop around it; 0: none) |
/// | b<j>.* (j = 0..2) | the store's buffers, largest unique footprint first (then bytes, then name), 17 values each: |
/// | b<j>.is_read, b<j>.is_write | the buffer is loaded / stored by this store statement |
/// | b<j>.is_local | the buffer lives in local or shared scope (registers, stack, GPU shared) |
/// | b<j>.accesses | number of load/store sites of the buffer in the statement |
/// | b<j>.bytes | log bytes accessed over all iterations (sites x iterations x element size) |
/// | b<j>.unique_bytes, b<j>.unique_lines | log distinct bytes and 64-byte cache lines touched by the whole nest |
/// | b<j>.unique_bytes_l1, _l2, _l3 | log distinct bytes touched by the innermost 1, 2, 3 loops (footprint per loop level) |
/// | b<j>.stride | log abs constant element stride along the innermost loop (analysis::StrideAlong; 0 when invariant or not constant) |
/// | b<j>.stride_zero, b<j>.stride_unit, b<j>.stride_other | one-hot analysis::ClassifyAccess along the innermost loop: invariant / unit stride / strided |
/// | b<j>.reuse_count | log extent of the innermost loop the access is invariant to (0: no reuse) |
/// | b<j>.reuse_dist_iters | log iterations between two uses (product of extents inside that loop) |
/// | b<j>.reuse_dist_bytes | log distinct bytes of all the store's buffers touched between two uses |
/// | ai_l1, ai_l2, ai_l3, ai_all | log arithmetic intensity: float ops / distinct bytes of all buffers, for the innermost 1, 2, 3 loops and the whole nest |
/// | alloc_bytes | log size of the stored buffer's allocation (0 for an argument) |
/// | alloc_outer_iterations | log product of the loops around that allocation (times it is (re)allocated) |
/// | alloc_local, alloc_shared, alloc_global | one-hot scope of that allocation (all 0 for an argument) |
///
/// Global block `g.`, 16 values:
///
/// | name | meaning |
/// |---|---|
/// | float_ops, int_ops | log float / integer operations of the whole program (a fma counts 2) |
/// | bytes | log bytes accessed by all stores and loads |
/// | num_stores, num_loops, max_depth | store statements, loops, deepest loop nest |
/// | num_allocs | allocations |
/// | alloc_local_bytes, alloc_global_bytes | log bytes allocated in local/shared and in global scratch |
/// | arg_bytes | log total size of the kernel's argument buffers |
/// | parallel_loops, vec_loops, unroll_loops | loops of each kind in the whole program |
/// | num_cores | log of the cores the features were computed for |
/// | rest_iterations, rest_float_ops | log iterations and float ops of the stores beyond the top kTopStores |
///
/// GPU block `gpu.`, kGpuFeatures = 17 values: the kernels of a GPU candidate (launch
/// configuration, occupancy, barriers, coalescing, bank conflicts, vector accesses); the table
/// is in gpu_features.h. All zero for CPU candidates.
///
/// Length: kTopStores * 98 + 16 + 17 = 327. Any change to names, order or meaning bumps
/// kFeatureVersion, so saved models trained on other features are refused. Version 2: FMA,
/// unroll and stride features come from compiler/analysis (what the code generator does).
/// Version 3: the GPU block. Version 4: `vec_gathers` counts only the gathers and scatters the
/// code generator emits (a load of a small constant stride is a span and a shuffle). Version 5:
/// `prefetch_ahead`.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compiler/lower/gpu/gpu_program.h"
#include "compiler/lower/lowered_func.h"
#include "costmodel/features/gpu_features.h"

namespace tuned::costmodel {

inline constexpr uint32_t kFeatureVersion = 5;
inline constexpr int kTopStores = 3;
inline constexpr int kBuffersPerStore = 3;
inline constexpr int kStoreFeatures = 98;
inline constexpr int kGlobalFeatures = 16;

struct FeatureOptions {
  /// Cores parallel loops run on (the target's -num-cores).
  int num_cores = 1;
  /// Cache line size used for unique_lines.
  int cache_line_bytes = 64;
  /// Set on GPU targets: what the GPU block assumes of the device, and the sign that stored
  /// traces are featurized with their kernels too (pre-training lowers them to kernels).
  std::optional<GpuFeatureOptions> gpu;
};

/// Length of every vector ExtractFeatures returns.
int FeatureCount();

/// Names of the features, in vector order (see the tables above).
const std::vector<std::string>& FeatureNames();

/// The feature vector of one lowered candidate; always FeatureCount() finite values, and the
/// same values for the same program. The GPU block is zero (a CPU candidate).
std::vector<float> ExtractFeatures(const lower::LoweredFunc& func,
                                   const FeatureOptions& options = {});

/// The same for a GPU candidate: `func` is its loop program, `program` its kernels (the same
/// schedule lowered by LowerGpu); the GPU block is ExtractGpuFeatures with `options.gpu` (its
/// defaults when unset).
std::vector<float> ExtractFeatures(const lower::LoweredFunc& func, const lower::gpu::GpuProgram& program,
                                   const FeatureOptions& options = {});

}  // namespace tuned::costmodel

#endif  // TUNED_COSTMODEL_FEATURES_FEATURES_H_

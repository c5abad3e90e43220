#ifndef TUNED_COMPILER_SCHEDULE_SCHEDULE_H_
#define TUNED_COMPILER_SCHEDULE_SCHEDULE_H_

/// \file
/// Schedule: the primitives that transform a workload's loop nests, each checked and recorded
/// into a trace. Blocks, loops and sampled integers are handed out as random variables (RVs);
/// a primitive that does not apply returns an error naming the block or loop and the rule
/// broken, and leaves the schedule unchanged.
///
/// Primitives (TVM TensorIR vocabulary):
///   get_block, get_loops                       look-ups
///   split, fuse, reorder                       loop structure; imperfect splits get predicates
///   parallel, vectorize, unroll, bind, annotate   loop kinds and annotations
///   cache_read, cache_write                    staging through a buffer in a memory scope
///   rfactor                                    a reduction as partial results per lane, combined
///   compute_at, reverse_compute_at             move a stage into a consumer's/producer's loop
///   block_layout                               a root buffer laid out in a consumer's tiles
///   compute_inline, reverse_compute_inline     fold an elementwise stage into its neighbour
///   decompose_reduction                        where the init of a reduction goes
///   sample_perfect_tile, sample_tile, sample_categorical, sample_compute_location   decisions

#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <variant>
#include <vector>

#include "common/status.h"
#include "compiler/schedule/schedule_state.h"
#include "compiler/schedule/trace.h"

namespace tuned::schedule {

struct BlockRV { uint32_t id = 0; };
struct LoopRV { uint32_t id = 0; };
struct IntRV { uint32_t id = 0; };

/// A split factor: a literal, a sampled integer, or inferred (at most one per split).
using Factor = std::variant<std::monostate, int64_t, IntRV>;

/// How rfactor's new axis divides the reduction axis: interleaved lanes (element = step * factor
/// + lane) or contiguous chunks (element = chunk * steps + step).
enum class RFactorOrder { kLanes, kChunks };

/// The loop sentinel values sample_compute_location may return.
inline constexpr int kRootLocation = -1;
inline constexpr int kInlineLocation = -2;

class Schedule {
 public:
  Schedule(std::shared_ptr<const ir::Workload> workload, uint64_t seed);

  const ScheduleState& state() const { return state_; }
  const Trace& trace() const { return trace_; }
  const ir::Workload& workload() const { return *state_.workload; }

  StatusOr<BlockRV> GetBlock(const std::string& name);
  StatusOr<std::vector<LoopRV>> GetLoops(BlockRV block);

  StatusOr<std::vector<LoopRV>> Split(LoopRV loop, const std::vector<Factor>& factors);
  StatusOr<LoopRV> Fuse(const std::vector<LoopRV>& loops);
  Status Reorder(const std::vector<LoopRV>& loops);

  Status Parallel(LoopRV loop);
  Status Vectorize(LoopRV loop);
  Status Unroll(LoopRV loop);
  /// Binds a loop to a GPU thread axis: blockIdx.{x,y,z} or threadIdx.{x,y,z}.
  Status Bind(LoopRV loop, const std::string& thread_tag);
  /// Annotations (>= 0): "auto_unroll_max_step"; "prefetch_ahead", iterations of the loop
  /// ahead that the CPU code generator prefetches its body's contiguous argument loads.
  Status Annotate(LoopRV loop, const std::string& key, int64_t value);

  /// Stages the `read_index`-th buffer `block` reads through a new buffer in `scope`.
  StatusOr<BlockRV> CacheRead(BlockRV block, int read_index, const std::string& scope);
  /// Makes `block` write into a new buffer in `scope`; returns the new block that copies it back.
  StatusOr<BlockRV> CacheWrite(BlockRV block, const std::string& scope);
  /// Splits the last reduction axis k of an untransformed root block into `factor` lanes: a new
  /// block (returned, before it, local scope) reduces out_rf[..., lane] over k = step * factor +
  /// lane (lanes past the extent add the identity), and the block reduces out_rf over the lanes.
  /// The lanes are a spatial axis of the new block, so they can be vectorized: a sum or max along
  /// a contiguous row (softmax, layer norm, a mean) becomes vector accumulators. The block keeps
  /// its spatial loops; its one reduction loop, at the index of its first, runs over the lanes
  /// (the CPU code generator folds a power-of-two count of them in halves, not one by one).
  /// With `RFactorOrder::kChunks` the new axis instead splits the *first* reduction axis k0 into
  /// `factor` contiguous chunks, k0 = chunk * ceil(extent / factor) + step, and out_rf lives in
  /// global scope: the chunks of a reduction with fewer outputs than cores are reduced on
  /// different cores, each streaming through one run of memory, and the block adds up their
  /// results.
  StatusOr<BlockRV> RFactor(BlockRV block, Factor factor, RFactorOrder order = RFactorOrder::kLanes);
  Status ComputeAt(BlockRV block, LoopRV loop);
  Status ReverseComputeAt(BlockRV block, LoopRV loop);
  /// Lays out the buffer `block` writes (computed at the root) in blocks of the region its
  /// consumers read in one iteration of `loop`, a loop of one of them: each block contiguous,
  /// the blocks in order. A weight panel read a column tile at a time becomes [N/T][K][T], so
  /// the tile streams through one run of memory; computed from constants alone, it is laid
  /// out once, by the kernel's prepack entry. A block that does not divide its dimension
  /// leaves the last one partly unused. Split and fuse carry the reference along like
  /// compute_at's.
  Status BlockLayout(BlockRV block, LoopRV loop);
  Status ComputeInline(BlockRV block);
  Status ReverseComputeInline(BlockRV block);
  Status DecomposeReduction(BlockRV block, LoopRV loop);

  /// Samples `n` factors whose product is the loop's extent, the innermost at most
  /// `max_innermost`. `decision` replays a given choice (validated).
  StatusOr<std::vector<IntRV>> SamplePerfectTile(LoopRV loop, int n, int max_innermost,
                                                 std::optional<std::vector<int64_t>> decision = {});
  /// Like SamplePerfectTile, but the factors' product may exceed the extent by up to
  /// `max_padding_percent` percent: the split is imperfect and its last tiles are guarded
  /// (lowering partitions the guard away from the full tiles). Opens the factorisations a prime
  /// or odd extent lacks (257 pads to 264 = 8 x 33). `min_innermost` > 1 keeps the innermost
  /// factor from falling below it (a vector that stays one), recorded only then.
  StatusOr<std::vector<IntRV>> SampleTile(LoopRV loop, int n, int max_innermost, int max_padding_percent,
                                          std::optional<std::vector<int64_t>> decision = {},
                                          int min_innermost = 1);
  StatusOr<IntRV> SampleCategorical(const std::vector<int64_t>& candidates,
                                    const std::vector<double>& probabilities,
                                    std::optional<int64_t> decision = {});
  /// Samples where `block` may be computed: a loop of one of its consumers, the root, or inline.
  StatusOr<LoopRV> SampleComputeLocation(BlockRV block, std::optional<int64_t> decision = {});

  /// The value of a sampled integer.
  int64_t Get(IntRV v) const;
  /// Stage id / (stage id, loop id) of an RV; loop id may be kRootLocation or kInlineLocation.
  int StageOf(BlockRV b) const;
  std::pair<int, int> LoopOf(LoopRV l) const;
  /// Name of a block or loop RV, for messages.
  std::string Describe(LoopRV l) const;

  /// Candidate locations of sample_compute_location, in decision-index order.
  std::vector<std::pair<int, int>> ComputeLocations(int stage) const;

 private:
  friend class TraceReplayer;
  struct RVValue {
    enum class Kind : uint8_t { kBlock, kLoop, kInt } kind;
    int stage = -1;
    int loop = -1;
    int64_t value = 0;
  };

  StatusOr<int> ResolveBlock(BlockRV b) const;
  StatusOr<std::pair<int, int>> ResolveLoop(LoopRV l) const;
  uint32_t NewRV(RVValue v);
  Instruction& Record(InstKind kind, std::vector<TraceArg> inputs);
  StatusOr<std::vector<IntRV>> SampleTileFactors(InstKind kind, LoopRV loop, int n, int max_innermost,
                                                 int max_padding_percent,
                                                 std::optional<std::vector<int64_t>> decision,
                                                 int min_innermost = 1);
  Status SetLoopKind(LoopRV loop, InstKind inst, ir::ForKind kind, const std::string& tag);
  std::string LoopName(int stage, int loop) const;
  int AddStage(Stage stage, int position);
  std::string UniqueStageName(const std::string& base) const;

  ScheduleState state_;
  Trace trace_;
  std::vector<RVValue> rvs_;
  std::mt19937_64 rng_;
};

/// Replays `trace` on a fresh schedule of `workload`. Sampling instructions use the trace's
/// decisions, overridden by `decisions` where given; a missing decision is sampled with `seed`.
StatusOr<Schedule> ReplayTrace(std::shared_ptr<const ir::Workload> workload, const Trace& trace,
                               uint64_t seed = 0,
                               const std::map<int, std::vector<int64_t>>& decisions = {});

}  // namespace tuned::schedule

#endif  // TUNED_COMPILER_SCHEDULE_SCHEDULE_H_

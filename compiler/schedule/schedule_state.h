#ifndef TUNED_COMPILER_SCHEDULE_SCHEDULE_STATE_H_
#define TUNED_COMPILER_SCHEDULE_SCHEDULE_STATE_H_

/// \file
/// The state a schedule transforms: the workload's stages (plus cache stages the schedule adds),
/// each with its loops, the split/fuse relations between them, the order of its leaf loops, loop
/// annotations, and where the stage is computed (at the root, at a loop of its consumer, at a
/// loop of its producer, or inlined). Lowering turns this state into a loop program.
///
/// Stages and loops are only ever appended, so their indices are stable ids for the lifetime of
/// a schedule; a stage that is inlined stays in the table, marked.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "compiler/ir/workload.h"

namespace tuned::schedule {

enum class LoopRelKind : uint8_t { kSplit, kFuse };

/// split: parent -> (outer, inner) with inner extent `factor`;
/// fuse: (outer, inner) -> fused.
struct LoopRel {
  LoopRelKind kind;
  int parent_or_outer;
  int outer_or_inner;
  int inner_or_fused;
  int64_t factor = 0;
};

struct Loop {
  std::string name;
  bool is_reduce = false;
  ir::ForKind kind = ir::ForKind::kSerial;
  std::string thread_tag;
  int64_t auto_unroll_max_step = 0;
  int64_t prefetch_ahead = 0;  // iterations ahead its body's argument loads are prefetched
};

enum class AttachKind : uint8_t { kRoot, kComputeAt, kReverseComputeAt, kInline };

struct Stage {
  std::string name;
  ir::Buffer output;
  std::vector<ir::Axis> axes;         // spatial axes: root loops 0..axes.size()-1
  std::vector<ir::Axis> reduce_axes;  // reduction axes: the root loops after them
  ir::ReduceKind reduce = ir::ReduceKind::kNone;
  ir::Expr body;
  bool is_output = false;             // writes the workload's output buffer

  std::vector<Loop> loops;
  std::vector<LoopRel> rels;
  std::vector<int> leaves;            // current loop nest, outermost first

  AttachKind attach = AttachKind::kRoot;
  int attach_stage = -1;
  int attach_loop = -1;
  int init_loop = -1;                 // decompose_reduction: init nest goes before this loop
  // block_layout (a root stage): its buffer is laid out in blocks of the region its consumers
  // read in one iteration of this loop of stage layout_stage; -1: the buffer's own order.
  int layout_stage = -1;
  int layout_loop = -1;

  int num_root_loops() const { return int(axes.size() + reduce_axes.size()); }
  bool is_reduction() const { return reduce != ir::ReduceKind::kNone; }
  bool is_live() const { return attach != AttachKind::kInline; }
  /// Index of `loop` in `leaves`, or -1 if it is not a leaf (was split or fused away).
  int LeafPosition(int loop) const;
  /// Root extents (spatial then reduction) of the full iteration domain.
  std::vector<int64_t> RootExtents() const;
  /// Extent of every loop given the extents of the root loops.
  std::vector<int64_t> LoopExtents(const std::vector<int64_t>& root_extents) const;
};

struct ScheduleState {
  std::shared_ptr<const ir::Workload> workload;
  std::vector<Stage> stages;   // stable ids
  std::vector<int> order;      // topological order of stage ids (producers first)

  /// The stage that writes `buffer`, or -1 (workload inputs have none).
  int ProducerOf(const ir::BufferNode* buffer) const;
  /// Live stages whose body loads `stage`'s output.
  std::vector<int> ConsumersOf(int stage) const;
  /// Buffers a stage's body loads, in order of first appearance.
  std::vector<ir::Buffer> ReadBuffers(int stage) const;
  /// True if `inner` is computed (transitively) inside a loop of `outer`.
  bool IsAttachedUnder(int inner, int outer) const;
};

/// The initial state: one stage per workload stage, every loop a root loop, all at the root.
ScheduleState MakeInitialState(std::shared_ptr<const ir::Workload> workload);

}  // namespace tuned::schedule

#endif  // TUNED_COMPILER_SCHEDULE_SCHEDULE_STATE_H_

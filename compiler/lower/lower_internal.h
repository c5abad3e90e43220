#ifndef TUNED_COMPILER_LOWER_LOWER_INTERNAL_H_
#define TUNED_COMPILER_LOWER_LOWER_INTERNAL_H_

/// \file
/// State shared by the lowering steps (private to compiler/lower).

#include <map>
#include <vector>

#include "compiler/ir/simplify.h"
#include "compiler/schedule/schedule_state.h"

namespace tuned::lower {

/// What lowering knows about one stage once its region is inferred.
struct StageInfo {
  bool done = false;
  bool in_progress = false;
  std::vector<ir::Expr> domain_min;       // per root loop (spatial then reduction)
  std::vector<int64_t> domain_extent;     // per root loop
  std::vector<int64_t> loop_extent;       // per loop id
  std::vector<ir::Var> loop_var;          // per loop id (used for leaves)
  std::vector<ir::Expr> loop_value;       // per loop id, in terms of leaf variables
  std::vector<ir::Expr> root_value;       // per root loop: domain_min + loop_value
};

/// Where an intermediate buffer lives and which part of it is materialised.
struct BufferPlacement {
  int stage = -1;                 // allocated inside leaf loop `loop` of `stage`; -1: at the top
  int loop = -1;
  ir::Buffer allocated;           // the buffer actually allocated (region-sized)
  std::vector<ir::Expr> offset;   // subtracted from every index
  // Dimension d of `allocated` is dimension dim_order[d] of the buffer the stages access
  // (buffer_layout.cc); empty: the same order.
  std::vector<int> dim_order;
  // block_layout: dimension d is split into blocks of block[d] (0: not split); the block
  // indices of the split dimensions come first, then every dimension within its block.
  std::vector<int64_t> block;

  /// The allocated buffer's indices of an access at `indices` of the staged buffer.
  std::vector<ir::Expr> Locate(std::vector<ir::Expr> indices) const;
};

struct LoweringContext {
  const schedule::ScheduleState& state;
  std::vector<StageInfo> info;
  ir::VarBounds bounds;           // every leaf variable's range
  std::map<const ir::BufferNode*, BufferPlacement> placements;

  explicit LoweringContext(const schedule::ScheduleState& s) : state(s), info(s.stages.size()) {}
};

/// Infers the region of every live stage and the placement of every intermediate buffer.
Status InferBounds(LoweringContext& ctx);

/// Lays out every placed buffer for the reduction that computes with it: the dimension its
/// vector loop walks along goes last; a buffer laid out in blocks is split into them
/// (buffer_layout.cc).
void ChooseBufferLayouts(LoweringContext& ctx);

/// The loop program of all live stages: `body`; with `prepack_constants`, the root stages that
/// derive a buffer from constant inputs alone are `prepack`, writing `packed` (not allocated
/// in `body`, which reads them).
struct LoopNests {
  ir::Stmt body;
  ir::Stmt prepack;  // undefined: none
  std::vector<ir::Buffer> packed;
};
StatusOr<LoopNests> GenerateLoopNests(LoweringContext& ctx, bool prepack_constants);

}  // namespace tuned::lower

#endif  // TUNED_COMPILER_LOWER_LOWER_INTERNAL_H_

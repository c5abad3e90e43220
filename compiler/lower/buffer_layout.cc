// Layouts of placed buffers. A stage reads and writes its staging buffers (a cache_read panel, a
// cache_write accumulator) at the indices of the buffer it stages, but nothing fixes the order
// of the dimensions in memory: a buffer is laid out so that the reduction computing with it
// walks its last dimension along its vector loop. A weight panel read along the output channels
// becomes channel-innermost (KCRS staged as CRSK) and a register tile vectorized over channels
// keeps whole vectors in channel order, so the hot loop loads and stores them contiguously;
// whoever copies into or out of the buffer pays the transposition once per element. A buffer
// laid out in blocks (block_layout) is split into them, the blocks outermost: a GEMV's weight
// panel blocked by the columns one parallel tile reads is [N/T][K][T], one stream per tile.

#include "compiler/analysis/access.h"
#include "compiler/ir/ir_mutator.h"
#include "compiler/lower/lower_internal.h"

namespace tuned::lower {
namespace {

using schedule::Stage;

// The spatial axis of `id` its vectorized leaf loop walks along, or -1.
int VectorAxis(const LoweringContext& ctx, int id) {
  const Stage& st = ctx.state.stages[id];
  const StageInfo& info = ctx.info[id];
  for (int leaf : st.leaves) {
    if (st.loops[leaf].kind != ir::ForKind::kVectorized) continue;
    const ir::VarNode* lane = info.loop_var[leaf].get();
    for (size_t a = 0; a < st.axes.size(); ++a) {
      if (ir::UsesVar(info.root_value[a], lane)) return int(a);
    }
  }
  return -1;
}

// The dimension of the buffer `writer` produces that the vector loop of the reduction computing
// with it walks along: the reduction itself (its accumulator), or a reduction reading it.
int VectorDimension(const LoweringContext& ctx, int writer) {
  const Stage& st = ctx.state.stages[writer];
  if (st.is_reduction()) return VectorAxis(ctx, writer);
  for (int reader : ctx.state.ConsumersOf(writer)) {
    const Stage& rs = ctx.state.stages[reader];
    int axis = rs.is_reduction() ? VectorAxis(ctx, reader) : -1;
    if (axis < 0) continue;
    return analysis::DimensionWalked(rs.body, st.output.get(), rs.axes[axis].var.get());
  }
  return -1;
}

}  // namespace

std::vector<ir::Expr> BufferPlacement::Locate(std::vector<ir::Expr> indices) const {
  for (size_t d = 0; d < indices.size(); ++d) indices[d] = indices[d] - offset[d];
  if (dim_order.empty() && block.empty()) return indices;
  std::vector<ir::Expr> located;
  for (size_t d = 0; d < block.size(); ++d) {
    if (block[d] > 0) located.push_back(ir::FloorDiv(indices[d], ir::MakeInt(block[d])));
  }
  for (size_t p = 0; p < indices.size(); ++p) {
    const size_t d = dim_order.empty() ? p : size_t(dim_order[p]);
    located.push_back(d < block.size() && block[d] > 0 ? ir::FloorMod(indices[d], ir::MakeInt(block[d])) : indices[d]);
  }
  return located;
}

void ChooseBufferLayouts(LoweringContext& ctx) {
  for (auto& [buffer, placement] : ctx.placements) {
    int writer = ctx.state.ProducerOf(buffer);
    if (writer < 0) continue;
    const std::vector<int64_t> region = placement.allocated->shape;
    const int rank = int(region.size());
    int last = VectorDimension(ctx, writer);
    if (last >= 0 && last != rank - 1) {
      for (int d = 0; d < rank; ++d) {
        if (d != last) placement.dim_order.push_back(d);
      }
      placement.dim_order.push_back(last);
    }
    if (placement.dim_order.empty() && placement.block.empty()) continue;
    std::vector<int64_t> shape;
    for (size_t d = 0; d < placement.block.size(); ++d) {
      if (placement.block[d] > 0) shape.push_back((region[d] + placement.block[d] - 1) / placement.block[d]);
    }
    for (int p = 0; p < rank; ++p) {
      const size_t d = placement.dim_order.empty() ? size_t(p) : size_t(placement.dim_order[p]);
      shape.push_back(d < placement.block.size() && placement.block[d] > 0 ? placement.block[d] : region[d]);
    }
    const ir::BufferNode& old = *placement.allocated;
    placement.allocated = ir::MakeBuffer(old.name, old.dtype, shape, old.scope);
  }
}

}  // namespace tuned::lower

// What a kernel may use on its target, and whether its index arithmetic fits in 32 bits.

#include "compiler/ir/ir_mutator.h"
#include "compiler/ir/simplify.h"
#include "compiler/lower/gpu/gpu_internal.h"

namespace tuned::lower::gpu {
namespace {

const char kDims[] = "xyz";

// Every loop variable's range and every index (flattened) with its constant bound.
class IndexRanges : public ir::IRVisitor {
 public:
  explicit IndexRanges(const GpuKernel& kernel) {
    for (const ThreadAxis& axis : kernel.axes) bounds_[axis.var.get()] = {0, axis.extent - 1};
  }
  bool fits = true;

 protected:
  void VisitFor(const ir::For* op) override {
    ir::Interval mn = ir::ConstBound(op->min, bounds_);
    ir::Interval ext = ir::ConstBound(op->extent, bounds_);
    if (!mn.bounded() || !ext.bounded()) {
      fits = false;
    } else {
      bounds_[op->var.get()] = {mn.lo, mn.hi + ext.hi - 1};
      Check(bounds_[op->var.get()]);
    }
    IRVisitor::VisitFor(op);
  }
  void VisitLoad(const ir::Load* op) override {
    Check(ir::ConstBound(FlatIndex(op->buffer, op->indices), bounds_));
    IRVisitor::VisitLoad(op);
  }
  void VisitStore(const ir::Store* op) override {
    Check(ir::ConstBound(FlatIndex(op->buffer, op->indices), bounds_));
    IRVisitor::VisitStore(op);
  }

 private:
  void Check(const ir::Interval& range) {
    fits &= range.bounded() && range.lo >= INT32_MIN && range.hi <= INT32_MAX;
  }
  ir::VarBounds bounds_;
};

}  // namespace

GpuLimitKind ExceededLimit(const GpuKernel& kernel, const GpuLimits& limits, std::string* message) {
  const std::string where = "kernel " + kernel.name + ": ";
  auto refuse = [message](GpuLimitKind kind, const std::string& text) {
    if (message != nullptr) *message = text;
    return kind;
  };
  if (limits.max_threads_per_block > 0 && kernel.threads_per_block() > limits.max_threads_per_block) {
    return refuse(GpuLimitKind::kThreadsPerBlock,
                  where + std::to_string(kernel.threads_per_block()) +
                      " threads per block, more than the target's " +
                      std::to_string(limits.max_threads_per_block));
  }
  for (int d = 0; d < 3; ++d) {
    if (limits.max_block[d] > 0 && kernel.block[d] > limits.max_block[d]) {
      return refuse(GpuLimitKind::kBlockDimension,
                    where + "threadIdx." + kDims[d] + " has extent " + std::to_string(kernel.block[d]) +
                        ", more than the target's " + std::to_string(limits.max_block[d]));
    }
    if (limits.max_grid[d] > 0 && kernel.grid[d] > limits.max_grid[d]) {
      return refuse(GpuLimitKind::kGridDimension,
                    where + "blockIdx." + kDims[d] + " has extent " + std::to_string(kernel.grid[d]) +
                        ", more than the target's " + std::to_string(limits.max_grid[d]));
    }
  }
  if (limits.max_shared_bytes > 0 && kernel.shared_bytes > limits.max_shared_bytes) {
    return refuse(GpuLimitKind::kSharedBytes,
                  where + std::to_string(kernel.shared_bytes) +
                      " bytes of shared memory per block, more than the target's " +
                      std::to_string(limits.max_shared_bytes));
  }
  return GpuLimitKind::kNone;
}

std::string_view GpuLimitName(GpuLimitKind kind) {
  switch (kind) {
    case GpuLimitKind::kNone: return "none";
    case GpuLimitKind::kThreadsPerBlock: return "threads_per_block";
    case GpuLimitKind::kBlockDimension: return "block_dimension";
    case GpuLimitKind::kGridDimension: return "grid_dimension";
    case GpuLimitKind::kSharedBytes: return "shared_bytes";
  }
  return "none";
}

GpuLimits NoGpuLimits() {
  GpuLimits none;
  none.max_threads_per_block = 0;
  none.max_block = {0, 0, 0};
  none.max_grid = {0, 0, 0};
  none.max_shared_bytes = 0;
  return none;
}

Status CheckLimits(const GpuKernel& kernel, const GpuLimits& limits) {
  std::string message;
  if (ExceededLimit(kernel, limits, &message) != GpuLimitKind::kNone) return InvalidArgumentError(message);
  return Status::Ok();
}

bool FitsInt32(const GpuKernel& kernel) {
  IndexRanges ranges(kernel);
  ranges.Visit(kernel.body);
  return ranges.fits;
}

}  // namespace tuned::lower::gpu

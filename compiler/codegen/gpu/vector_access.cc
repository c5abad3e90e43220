// The vector-access decision of the GPU printer (see vector_access.h).

#include "compiler/codegen/gpu/vector_access.h"

#include <numeric>

#include "compiler/analysis/access.h"
#include "compiler/ir/ir_mutator.h"

namespace tuned::codegen::gpu {
namespace {

using namespace tuned::ir;

// Every load of an expression, outermost first.
class LoadCollector : public IRVisitor {
 public:
  std::vector<const Load*> loads;

 protected:
  void VisitLoad(const Load* op) override {
    loads.push_back(op);
    IRVisitor::VisitLoad(op);
  }
};

std::vector<const Load*> LoadsOf(const Expr& e) {
  LoadCollector collector;
  collector.Visit(e);
  return collector.loads;
}

bool IsFloat32(const Buffer& b) { return b->dtype.is_float() && b->dtype.bits == 32; }

}  // namespace

bool BaseAligned(const lower::gpu::GpuKernel& kernel, const BufferNode* buffer) {
  for (const Buffer& p : kernel.params) {
    if (p.get() == buffer) return true;
  }
  for (const Buffer& s : kernel.shared) {
    if (s.get() == buffer) return true;
  }
  return false;
}

std::optional<VectorLoop> PlanVectorLoop(const For& loop, const VarBounds& outer,
                                         const std::function<bool(const BufferNode*)>& aligned) {
  const int64_t* min = AsConstInt(loop.min);
  const int64_t* extent = AsConstInt(loop.extent);
  if (loop.kind != ForKind::kVectorized || !min || !extent || (*extent != 2 && *extent != 4)) {
    return std::nullopt;
  }
  VectorLoop plan;
  plan.width = *extent;
  Stmt body = loop.body;
  if (const IfThenElse* branch = body.as<IfThenElse>()) {
    if (branch->else_case.defined() || UsesVar(branch->cond, loop.var.get()) || !LoadsOf(branch->cond).empty()) {
      return std::nullopt;
    }
    plan.guard = branch->cond;
    body = branch->then_case;
  }
  plan.store = body.as<Store>();
  if (plan.store == nullptr) return std::nullopt;

  VarBounds bounds = outer;
  bounds[loop.var.get()] = {*min, *min + *extent - 1};
  VarMap first_lane{{loop.var.get(), MakeInt(*min, loop.var->type)}};
  // The flat offset of an access, and its first lane's when it is an aligned unit-stride run.
  auto run = [&](const Buffer& buffer, const std::vector<Expr>& indices) -> std::optional<Expr> {
    Expr offset = analysis::FlatOffset(buffer->shape, indices, bounds);
    if (!IsFloat32(buffer) || !aligned(buffer.get())) return std::nullopt;
    if (analysis::AnalyzeAccess(offset, loop.var, bounds).pattern != analysis::AccessPattern::kUnitStride) {
      return std::nullopt;
    }
    for (const Expr& index : indices) {
      if (!LoadsOf(index).empty()) return std::nullopt;
    }
    Expr first = Simplify(Substitute(offset, first_lane), outer);
    if (analysis::KnownDivisor(first) % plan.width != 0) return std::nullopt;
    return first;
  };

  const Store& store = *plan.store;
  std::optional<Expr> stored = run(store.buffer, store.indices);
  if (!stored) return std::nullopt;
  plan.stored = {nullptr, *stored};
  Expr stored_offset = analysis::FlatOffset(store.buffer->shape, store.indices, bounds);
  for (const Load* load : LoadsOf(store.value)) {
    Expr offset = analysis::FlatOffset(load->buffer->shape, load->indices, bounds);
    // Lanes read before any lane writes: safe only where each lane reads its own element.
    if (load->buffer == store.buffer && !StructurallyEqual(offset, stored_offset)) return std::nullopt;
    if (!UsesVar(offset, loop.var.get())) continue;  // the same value in every lane
    std::optional<Expr> first = run(load->buffer, load->indices);
    if (!first) return std::nullopt;
    plan.loads.push_back({load, *first});
  }
  return plan;
}

}  // namespace tuned::codegen::gpu

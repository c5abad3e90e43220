#include "compiler/analysis/loop_analysis.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "compiler/analysis/access.h"
#include "compiler/ir/ir_mutator.h"

namespace tuned::analysis {
namespace {

using namespace tuned::ir;

// Records every access to the buffers of one loop body, and everything that blocks lockstep.
class AccessCollector : public IRVisitor {
 public:
  AccessCollector(const VarNode* lane, VarBounds bounds) : lane_(lane), bounds_(std::move(bounds)) {}

  struct Access {
    const std::vector<Expr>* indices;
    bool is_store;
  };
  std::unordered_map<const BufferNode*, std::vector<Access>> accesses;
  std::vector<const BufferNode*> stored;  // in order of first store
  std::string blocker;
  const VarBounds& bounds() const { return bounds_; }

 protected:
  void VisitAllocate(const Allocate* op) override {
    if (blocker.empty()) blocker = "allocates " + op->buffer->name + " per lane";
    IRVisitor::VisitAllocate(op);
  }
  void VisitLoad(const Load* op) override {
    accesses[op->buffer.get()].push_back({&op->indices, false});
    IRVisitor::VisitLoad(op);
  }
  void VisitStore(const Store* op) override {
    auto& list = accesses[op->buffer.get()];
    if (std::none_of(list.begin(), list.end(), [](const Access& a) { return a.is_store; })) {
      stored.push_back(op->buffer.get());
    }
    list.push_back({&op->indices, true});
    IRVisitor::VisitStore(op);
  }
  void VisitFor(const For* op) override {
    if (blocker.empty() && (UsesVar(op->min, lane_) || UsesVar(op->extent, lane_))) {
      blocker = "bounds of inner loop " + op->var->name + " depend on the lane";
    }
    if (std::optional<Interval> range = ConstantLoopRange(*op)) bounds_[op->var.get()] = *range;
    IRVisitor::VisitFor(op);
    bounds_.erase(op->var.get());
  }

 private:
  const VarNode* lane_;
  VarBounds bounds_;
};

bool SameIndices(const std::vector<Expr>& a, const std::vector<Expr>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!StructurallyEqual(a[i], b[i])) return false;
  }
  return true;
}

class GuardFinder : public IRVisitor {
 public:
  bool found = false;
  using IRVisitor::Visit;
  void Visit(const Expr& e) override {
    if (!found) IRVisitor::Visit(e);
  }

 protected:
  void VisitBinary(const Binary* op) override {
    bool divides = op->op == BinaryOp::kDiv || op->op == BinaryOp::kFloorDiv ||
                   op->op == BinaryOp::kFloorMod;
    if (divides && !op->b.type().is_float()) {
      const int64_t* divisor = AsConstInt(op->b);
      if (divisor == nullptr || *divisor == 0) found = true;
    }
    IRVisitor::VisitBinary(op);
  }
  void VisitLoad(const Load*) override { found = true; }
};

class FreeSymbolCollector : public IRVisitor {
 public:
  FreeSymbols result;

 protected:
  void VisitAllocate(const Allocate* op) override {
    allocated_.insert(op->buffer.get());
    IRVisitor::VisitAllocate(op);
  }
  void VisitVar(const VarNode* op) override {
    if (!bound_.count(op) && seen_vars_.insert(op).second) result.vars.push_back(op);
  }
  void VisitLoad(const Load* op) override {
    UseBuffer(op->buffer);
    IRVisitor::VisitLoad(op);
  }
  void VisitStore(const Store* op) override {
    UseBuffer(op->buffer);
    IRVisitor::VisitStore(op);
  }
  void VisitFor(const For* op) override {
    Visit(op->min);
    Visit(op->extent);
    bound_.insert(op->var.get());
    Visit(op->body);
  }

 private:
  void UseBuffer(const Buffer& b) {
    if (!allocated_.count(b.get()) && seen_buffers_.insert(b.get()).second) {
      result.buffers.push_back(b);
    }
  }
  std::unordered_set<const VarNode*> bound_, seen_vars_;
  std::unordered_set<const BufferNode*> allocated_, seen_buffers_;
};

// Whether a statement stores to (or, with `loads`, loads from) one buffer.
class BufferUseFinder : public IRVisitor {
 public:
  BufferUseFinder(const BufferNode* buffer, bool loads) : buffer_(buffer), loads_(loads) {}
  bool found = false;

 protected:
  void VisitStore(const Store* op) override {
    if (!loads_ && op->buffer.get() == buffer_) found = true;
    IRVisitor::VisitStore(op);
  }
  void VisitLoad(const Load* op) override {
    if (loads_ && op->buffer.get() == buffer_) found = true;
    IRVisitor::VisitLoad(op);
  }

 private:
  const BufferNode* buffer_;
  const bool loads_;
};

}  // namespace

std::string VectorizeBlocker(const For& loop, const VarBounds& bounds) {
  const int64_t* extent = AsConstInt(loop.extent);
  if (extent == nullptr) return "extent is not a constant";
  VarBounds inner = bounds;
  // Bound the lane variable to all but its last value, as ConstantStride requires.
  if (const int64_t* mn = AsConstInt(loop.min); mn && *extent > 1) {
    inner[loop.var.get()] = {*mn, *mn + *extent - 2};
  }
  AccessCollector collector(loop.var.get(), inner);
  collector.Visit(loop.body);
  if (!collector.blocker.empty()) return collector.blocker;
  for (const BufferNode* buffer : collector.stored) {
    const auto& list = collector.accesses.at(buffer);
    const std::vector<Expr>& first = *list.front().indices;
    for (const auto& access : list) {
      if (!SameIndices(first, *access.indices)) {
        return "buffer " + buffer->name + " is written and accessed at different indices";
      }
    }
    Expr offset = FlatOffset(buffer->shape, first, collector.bounds());
    std::optional<int64_t> stride = ConstantStride(offset, loop.var, collector.bounds());
    if (!stride) return "index of written buffer " + buffer->name + " is not affine in the lane";
    if (*stride == 0) return "written buffer " + buffer->name + " is the same element for all lanes";
  }
  return "";
}

bool NeedsGuard(const Expr& e) {
  GuardFinder finder;
  finder.Visit(e);
  return finder.found;
}

FreeSymbols CollectFreeSymbols(const Stmt& s) {
  FreeSymbolCollector collector;
  collector.Visit(s);
  return std::move(collector.result);
}

bool StoresTo(const Stmt& s, const BufferNode* buffer) {
  BufferUseFinder finder(buffer, /*loads=*/false);
  finder.Visit(s);
  return finder.found;
}

bool LoadsFrom(const Stmt& s, const BufferNode* buffer) {
  BufferUseFinder finder(buffer, /*loads=*/true);
  finder.Visit(s);
  return finder.found;
}

}  // namespace tuned::analysis

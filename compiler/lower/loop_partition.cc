#include "compiler/lower/loop_partition.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "compiler/ir/ir_mutator.h"
#include "compiler/ir/simplify.h"
#include "compiler/lower/guards.h"

namespace tuned::lower {
namespace {

using ir::Expr;
using ir::Interval;
using ir::Stmt;
using ir::VarBounds;

// The largest k in [0, n) for which `decided(k)` holds, given that it holds for 0 and that it
// holds for every smaller k where it holds for k (a guard decided on a range is decided on any
// part of it).
template <typename Decided>
int64_t LongestDecided(int64_t n, const Decided& decided) {
  int64_t lo = 0, hi = n - 1;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo + 1) / 2;
    if (decided(mid)) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return lo;
}

class Partitioner : public ir::IRMutator {
 public:
  explicit Partitioner(int budget) : budget_(budget) {}
  using IRMutator::Mutate;

 protected:
  Stmt MutateFor(const ir::For* op, const Stmt& self) override {
    std::optional<Interval> range = ConstantRange(*op);
    if (!range) return IRMutator::MutateFor(op, self);
    std::vector<int64_t> cuts;
    if (op->kind != ir::ForKind::kVectorized && op->kind != ir::ForKind::kThreadBinding) {
      cuts = Cuts(*op, *range);
    }
    if (int(cuts.size()) > budget_) cuts.clear();
    budget_ -= int(cuts.size());
    cuts.push_back(range->hi + 1);

    std::vector<Stmt> bodies;  // the body of each piece, folded on its range
    bool changed = cuts.size() > 1;
    int64_t begin = range->lo;
    for (int64_t end : cuts) {
      outer_[op->var.get()] = {begin, end - 1};
      bodies.push_back(Mutate(op->body));
      changed |= !bodies.back().same_as(op->body);
      begin = end;
    }
    outer_.erase(op->var.get());
    if (!changed) return self;
    if (op->kind == ir::ForKind::kParallel && bodies.size() > 1) {
      // Pieces of a parallel loop would be parallel launches one after another (an edge piece
      // of one iteration on one core while the others wait): one loop picks its piece's body.
      Stmt body = bodies.back();
      for (size_t k = bodies.size() - 1; k-- > 0;) {
        body = ir::MakeIfThenElse(Expr(op->var) < ir::MakeInt(cuts[k], op->min.type()), bodies[k], body);
      }
      return ir::MakeFor(op->var, op->min, op->extent, op->kind, body, op->thread_tag, op->auto_unroll_max_step,
                         op->prefetch_ahead);
    }
    std::vector<Stmt> pieces;
    begin = range->lo;
    for (size_t k = 0; k < cuts.size(); ++k) {
      pieces.push_back(ir::MakeFor(op->var, ir::MakeInt(begin, op->min.type()),
                                   ir::MakeInt(cuts[k] - begin, op->extent.type()), op->kind, bodies[k],
                                   op->thread_tag, op->auto_unroll_max_step, op->prefetch_ahead));
      begin = cuts[k];
    }
    return ir::MakeSeq(std::move(pieces));
  }

 private:
  // Where the loop's guards become decided: the end of each undecided guard's longest decided
  // head and the start of its longest decided tail. At most three cuts (an interior and two
  // edges); a loop with more is left whole and its inner loops are partitioned instead.
  std::vector<int64_t> Cuts(const ir::For& loop, Interval range) {
    const int64_t n = range.hi - range.lo + 1;
    std::vector<int64_t> cuts;
    for (const Guard& guard : CollectGuards(loop.body, loop.var.get())) {
      VarBounds bounds = outer_;
      bounds.insert(guard.inner.begin(), guard.inner.end());
      auto decided = [&](int64_t lo, int64_t hi) {
        bounds[loop.var.get()] = {lo, hi};
        return ir::AsConstInt(ir::Simplify(guard.cond, bounds)) != nullptr;
      };
      if (decided(range.lo, range.hi)) continue;
      const int64_t head = LongestDecided(n, [&](int64_t k) { return decided(range.lo, range.lo + k - 1); });
      const int64_t tail = LongestDecided(n, [&](int64_t k) { return decided(range.hi - k + 1, range.hi); });
      if (head > 0) cuts.push_back(range.lo + head);
      if (tail > 0) cuts.push_back(range.hi + 1 - tail);
    }
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    if (cuts.size() > 3) cuts.clear();
    return cuts;
  }

  int budget_;
  VarBounds outer_;  // ranges of the enclosing loops (of the piece being rebuilt)
};

}  // namespace

ir::Stmt PartitionLoops(const ir::Stmt& body, int max_extra_loops) {
  Partitioner partitioner(max_extra_loops);
  return partitioner.Mutate(body);
}

}  // namespace tuned::lower

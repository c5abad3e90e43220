#include "costmodel/features/features.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>

#include "common/check.h"
#include "compiler/analysis/access.h"
#include "compiler/analysis/fma.h"
#include "compiler/analysis/unroll.h"
#include "compiler/ir/expr_functor.h"
#include "compiler/ir/ir_mutator.h"
#include "compiler/ir/simplify.h"

namespace tuned::costmodel {
namespace {

using ir::BinaryOp;
using ir::Expr;
using ir::Stmt;

// ---- layout ----

// The loop features (store blocks, then the global block); the GPU block follows them.
constexpr int kLoopFeatureCount = kTopStores * kStoreFeatures + kGlobalFeatures;

constexpr int kArithFeatures = 13;
constexpr int kLoopFeatures = 8;
constexpr int kAnnotationFeatures = 17;
constexpr int kBufferFeatures = 17;
constexpr int kIntensityFeatures = 4;
constexpr int kAllocFeatures = 5;
static_assert(kArithFeatures + kLoopFeatures + kAnnotationFeatures +
                      kBuffersPerStore * kBufferFeatures + kIntensityFeatures + kAllocFeatures ==
                  kStoreFeatures,
              "store block layout and kStoreFeatures disagree");

constexpr const char* kArithNames[kArithFeatures] = {
    "float_add", "float_mul", "float_fma",  "float_div", "float_cmp", "float_math", "int_add",
    "int_mul",   "int_divmod", "int_cmp",   "bool_ops",  "select",    "cast"};
constexpr const char* kLoopNames[kLoopFeatures] = {
    "num_loops",         "iterations", "innermost_extent", "outer_iterations",
    "reduce_loops", "reduce_iterations", "predicates",  "is_update"};
constexpr const char* kAnnotationNames[kAnnotationFeatures] = {
    "vec_innermost",        "vec_lanes",         "vec_loops",        "vec_gathers",
    "unroll_loops",         "unroll_product",    "unroll_innermost", "parallel_loops",
    "parallel_extent",      "parallel_per_core", "parallel_balance", "parallel_outer_iterations",
    "auto_unroll_max_step", "auto_unroll_steps", "thread_loops",     "thread_extent",
    "prefetch_ahead"};
constexpr const char* kBufferNames[kBufferFeatures] = {
    "is_read",         "is_write",        "is_local",        "accesses",     "bytes",
    "unique_bytes",    "unique_lines",    "unique_bytes_l1", "unique_bytes_l2",
    "unique_bytes_l3", "stride",          "stride_zero",     "stride_unit",  "stride_other",
    "reuse_count",     "reuse_dist_iters", "reuse_dist_bytes"};
constexpr const char* kIntensityNames[kIntensityFeatures] = {"ai_l1", "ai_l2", "ai_l3", "ai_all"};
constexpr const char* kAllocNames[kAllocFeatures] = {
    "alloc_bytes", "alloc_outer_iterations", "alloc_local", "alloc_shared", "alloc_global"};
constexpr const char* kGlobalNames[kGlobalFeatures] = {
    "float_ops",      "int_ops",        "bytes",          "num_stores",
    "num_loops",      "max_depth",      "num_allocs",     "alloc_local_bytes",
    "alloc_global_bytes", "arg_bytes",  "parallel_loops", "vec_loops",
    "unroll_loops",   "num_cores",      "rest_iterations", "rest_float_ops"};

float Slog(double x) { return float(std::log2(std::fabs(x) + 1.0)); }

// ---- what the walk collects ----

enum ArithIndex : int {
  kFloatAdd, kFloatMul, kFloatFma, kFloatDiv, kFloatCmp, kFloatMath,
  kIntAdd, kIntMul, kIntDivMod, kIntCmp, kBoolOps, kSelectOps, kCastOps
};

struct LoopFrame {
  const ir::VarNode* var = nullptr;
  ir::Var handle;
  bool has_min = false;  // the loop starts at an expression of outer loops, min_expr
  Expr min_expr;
  int64_t const_min = 0;  // otherwise it starts here
  int64_t extent = 1;
  ir::ForKind kind = ir::ForKind::kSerial;
  analysis::Unroll unroll = analysis::Unroll::kNone;  // as the code generator emits the loop
  int64_t auto_unroll_budget = 0;  // auto_unroll_max_step in force inside the loop
  int64_t prefetch_ahead = 0;      // that of the innermost loop around (or this one) annotated so
};

struct AllocFrame {
  const ir::BufferNode* buffer = nullptr;
  double bytes = 0;
  double outer_iterations = 1;
  ir::MemoryScope scope = ir::MemoryScope::kGlobal;
};

// One load or store site: coefficients of its indices per loop, coef[dim * depth + loop].
// Strides come from the analysis the code generator uses (analysis/access.h).
struct Access {
  const ir::BufferNode* buffer = nullptr;
  bool is_write = false;
  std::vector<double> coef;
  analysis::AccessPattern innermost = analysis::AccessPattern::kInvariant;
  std::optional<int64_t> innermost_stride;  // along the innermost loop, when constant
  analysis::AccessPattern vectorized = analysis::AccessPattern::kInvariant;  // innermost vec loop
  bool vector_gather = false;  // a gather or scatter along it (not a load read as a span)
};

struct StoreInfo {
  int order = 0;
  std::vector<LoopFrame> loops;
  int predicates = 0;
  double ops[kArithFeatures] = {};  // per iteration
  std::vector<Access> accesses;     // [0] is the store itself
  bool is_update = false;
  bool has_alloc = false;
  AllocFrame alloc;  // of the stored buffer, when has_alloc
  double iterations = 1;

  double FloatOpsPerIteration() const {
    return ops[kFloatAdd] + ops[kFloatMul] + 2 * ops[kFloatFma] + ops[kFloatDiv] +
           ops[kFloatCmp] + ops[kFloatMath];
  }
  double IntOpsPerIteration() const {
    return ops[kIntAdd] + ops[kIntMul] + ops[kIntDivMod] + ops[kIntCmp];
  }
};

// Coefficients of an index expression per enclosing loop (see the header: affine model).
class AffineCoefficients : public ir::ExprFunctor<void(const Expr&, double, double*)> {
 public:
  explicit AffineCoefficients(const std::vector<LoopFrame>& loops) : loops_(loops) {}

  // Adds scale x (coefficients of e) into coef (one row of loops.size() values).
  void Add(const Expr& e, double scale, double* coef) { VisitExpr(e, scale, coef); }

 protected:
  void VisitIntImm(const ir::IntImm*, double, double*) override {}
  void VisitFloatImm(const ir::FloatImm*, double, double*) override {}
  void VisitVar(const ir::VarNode* op, double scale, double* coef) override {
    int level = LoopLevel(op);
    if (level < 0) return;
    coef[level] += scale;
    if (loops_[size_t(level)].has_min) Add(loops_[size_t(level)].min_expr, scale, coef);
  }
  void VisitCast(const ir::Cast* op, double scale, double* coef) override {
    Add(op->value, scale, coef);
  }
  void VisitSelect(const ir::Select* op, double scale, double* coef) override {
    Add(op->true_value, scale, coef);
    Add(op->false_value, scale, coef);
  }
  void VisitBinary(const ir::Binary* op, double scale, double* coef) override {
    switch (op->op) {
      case BinaryOp::kAdd:
        Add(op->a, scale, coef);
        Add(op->b, scale, coef);
        return;
      case BinaryOp::kSub:
        Add(op->a, scale, coef);
        Add(op->b, -scale, coef);
        return;
      case BinaryOp::kMul: {
        if (const int64_t* c = ir::AsConstInt(op->b)) return Add(op->a, scale * double(*c), coef);
        if (const int64_t* c = ir::AsConstInt(op->a)) return Add(op->b, scale * double(*c), coef);
        Add(op->a, scale, coef);
        Add(op->b, scale, coef);
        return;
      }
      case BinaryOp::kDiv:
      case BinaryOp::kFloorDiv: {
        const int64_t* c = ir::AsConstInt(op->b);
        Add(op->a, c && *c != 0 ? scale / double(*c) : scale, coef);
        return;
      }
      case BinaryOp::kFloorMod:
        return Add(op->a, scale, coef);
      case BinaryOp::kMin:
      case BinaryOp::kMax:
        Add(op->a, scale, coef);
        Add(op->b, scale, coef);
        return;
      default:
        return;  // comparisons and logic do not index
    }
  }
  // Comparisons, loads and calls inside an index: indirect access, treated as constant.
  void VisitNot(const ir::Not*, double, double*) override {}
  void VisitLoad(const ir::Load*, double, double*) override {}
  void VisitCall(const ir::Call*, double, double*) override {}

 private:
  int LoopLevel(const ir::VarNode* var) const {
    for (int i = int(loops_.size()) - 1; i >= 0; --i) {
      if (loops_[size_t(i)].var == var) return i;
    }
    return -1;
  }

  const std::vector<LoopFrame>& loops_;
};

// The loops around the point being walked, and the constant bounds the code generator knows.
struct LoopContext {
  std::vector<LoopFrame> loops;
  ir::VarBounds bounds;
  // Enclosing ifs whose condition tests a vectorized loop's variable: the code generator's lane
  // masks.
  int lane_masks = 0;
};

Access MakeAccess(const ir::BufferNode* buffer, const std::vector<Expr>& indices, bool is_write,
                  const LoopContext& context) {
  const std::vector<LoopFrame>& loops = context.loops;
  Access access;
  access.buffer = buffer;
  access.is_write = is_write;
  const size_t depth = loops.size();
  access.coef.assign(indices.size() * depth, 0.0);
  if (depth == 0) return access;
  AffineCoefficients coefficients(loops);
  for (size_t d = 0; d < indices.size(); ++d) {
    coefficients.Add(indices[d], 1.0, &access.coef[d * depth]);
  }
  Expr offset = analysis::RowMajorOffset(buffer->shape, indices);
  const analysis::AccessAlong along =
      analysis::AnalyzeAccess(offset, loops.back().handle, context.bounds);
  access.innermost = along.pattern;
  if (along.pattern != analysis::AccessPattern::kInvariant) access.innermost_stride = along.stride;
  for (size_t k = depth; k-- > 0;) {
    if (loops[k].kind != ir::ForKind::kVectorized) continue;
    const analysis::AccessAlong vector_along =
        k + 1 == depth ? along : analysis::AnalyzeAccess(offset, loops[k].handle, context.bounds);
    access.vectorized = vector_along.pattern;
    // A strided load is a gather unless it reads its span; a strided store is a store per lane
    // unless a lane mask makes it a scatter (the code generator's PlanAccess).
    access.vector_gather = vector_along.pattern == analysis::AccessPattern::kStrided &&
                           (is_write ? context.lane_masks > 0 : !analysis::LoadsAsSpan(vector_along));
    break;
  }
  return access;
}

// Counts the operations of one store statement per iteration and records its loads.
class OpCounter : public ir::ExprFunctor<void(const Expr&)> {
 public:
  OpCounter(StoreInfo& info, const LoopContext& context) : info_(info), context_(context) {}

  void Count(const Expr& e) { VisitExpr(e); }

 protected:
  void VisitIntImm(const ir::IntImm*) override {}
  void VisitFloatImm(const ir::FloatImm*) override {}
  void VisitVar(const ir::VarNode*) override {}
  void VisitNot(const ir::Not* op) override {
    info_.ops[kBoolOps] += 1;
    Count(op->a);
  }
  void VisitSelect(const ir::Select* op) override {
    info_.ops[kSelectOps] += 1;
    Count(op->cond);
    Count(op->true_value);
    Count(op->false_value);
  }
  void VisitCast(const ir::Cast* op) override {
    info_.ops[kCastOps] += 1;
    Count(op->value);
  }
  void VisitLoad(const ir::Load* op) override {
    if (op->buffer.get() == info_.accesses.front().buffer) info_.is_update = true;
    info_.accesses.push_back(MakeAccess(op->buffer.get(), op->indices, /*is_write=*/false, context_));
    for (const Expr& i : op->indices) Count(i);
  }
  void VisitCall(const ir::Call* op) override {
    info_.ops[kFloatMath] += 1;  // every intrinsic is a float math function
    for (const Expr& a : op->args) Count(a);
  }
  void VisitBinary(const ir::Binary* op) override {
    double* ops = info_.ops;
    const bool is_float = op->a.type().is_float();
    switch (op->op) {
      case BinaryOp::kAdd:
      case BinaryOp::kSub: {
        // One fused multiply-add where the code generator contracts one; the mul is part of it.
        if (std::optional<analysis::FmaContraction> fma = analysis::MatchFma(*op)) {
          ops[kFloatFma] += 1;
          for (const Expr* side : {&op->a, &op->b}) {
            if (side->get() != fma->mul) {
              Count(*side);
              continue;
            }
            Count(fma->mul->a);
            Count(fma->mul->b);
          }
          return;
        }
        ops[is_float ? kFloatAdd : kIntAdd] += 1;
        break;
      }
      case BinaryOp::kMul: ops[is_float ? kFloatMul : kIntMul] += 1; break;
      case BinaryOp::kDiv:
      case BinaryOp::kFloorDiv:
      case BinaryOp::kFloorMod: ops[is_float ? kFloatDiv : kIntDivMod] += 1; break;
      case BinaryOp::kMin:
      case BinaryOp::kMax:
      case BinaryOp::kEQ:
      case BinaryOp::kNE:
      case BinaryOp::kLT:
      case BinaryOp::kLE:
      case BinaryOp::kGT:
      case BinaryOp::kGE: ops[is_float ? kFloatCmp : kIntCmp] += 1; break;
      case BinaryOp::kAnd:
      case BinaryOp::kOr: ops[kBoolOps] += 1; break;
    }
    Count(op->a);
    Count(op->b);
  }

 private:
  StoreInfo& info_;
  const LoopContext& context_;
};

// Walks the program once, recording every store with its loop nest.
class Collector : public ir::StmtFunctor<void(const Stmt&)> {
 public:
  void Walk(const Stmt& s) { VisitStmt(s); }

  std::vector<StoreInfo> stores;
  std::vector<AllocFrame> all_allocs;
  int num_loops = 0;
  int max_depth = 0;
  int parallel_loops = 0;
  int vec_loops = 0;
  int unroll_loops = 0;

 private:
  double CurrentIterations() const {
    double p = 1;
    for (const LoopFrame& l : context_.loops) p *= double(l.extent);
    return p;
  }

  int64_t ExtentOf(const ir::For* op) const {
    if (const int64_t* c = ir::AsConstInt(op->extent)) return std::max<int64_t>(*c, 1);
    // Rare: a data-dependent extent; bound it with the enclosing loops' ranges.
    ir::VarBounds bounds;
    for (const LoopFrame& l : context_.loops) {
      ir::Interval min_range = l.has_min ? ir::ConstBound(l.min_expr, bounds)
                                         : ir::Interval{l.const_min, l.const_min};
      if (!min_range.bounded()) continue;
      bounds[l.var] = {min_range.lo, min_range.hi + l.extent - 1};
    }
    ir::Interval range = ir::ConstBound(op->extent, bounds);
    if (!range.bounded()) return 1;
    return std::max<int64_t>(range.hi, 1);
  }

  void VisitFor(const ir::For* op) override {
    LoopFrame frame;
    frame.var = op->var.get();
    if (const int64_t* c = ir::AsConstInt(op->min)) {
      frame.const_min = *c;
    } else {
      frame.has_min = true;
      frame.min_expr = op->min;
    }
    frame.extent = ExtentOf(op);
    frame.handle = op->var;
    frame.kind = op->kind;
    const int64_t budget = context_.loops.empty() ? 0 : context_.loops.back().auto_unroll_budget;
    frame.unroll = analysis::UnrollOf(*op, budget);
    frame.auto_unroll_budget = analysis::BudgetInside(*op, budget);
    frame.prefetch_ahead = op->prefetch_ahead > 0 ? op->prefetch_ahead
                           : context_.loops.empty() ? 0
                                                    : context_.loops.back().prefetch_ahead;
    ++num_loops;
    if (op->kind == ir::ForKind::kParallel) ++parallel_loops;
    if (op->kind == ir::ForKind::kVectorized) ++vec_loops;
    if (op->kind == ir::ForKind::kUnrolled) ++unroll_loops;
    context_.loops.push_back(std::move(frame));
    const std::optional<ir::Interval> range = analysis::ConstantLoopRange(*op);
    if (range) context_.bounds[op->var.get()] = *range;
    max_depth = std::max(max_depth, int(context_.loops.size()));
    Walk(op->body);
    context_.bounds.erase(op->var.get());
    context_.loops.pop_back();
  }

  void VisitStore(const ir::Store* op) override {
    StoreInfo info;
    info.order = int(stores.size());
    info.loops = context_.loops;
    info.predicates = predicates_;
    info.iterations = CurrentIterations();
    for (auto it = allocs_.rbegin(); it != allocs_.rend(); ++it) {
      if (it->buffer == op->buffer.get()) {
        info.alloc = *it;
        info.has_alloc = true;
        break;
      }
    }
    info.accesses.push_back(MakeAccess(op->buffer.get(), op->indices, /*is_write=*/true, context_));
    OpCounter counter(info, context_);
    for (const Expr& i : op->indices) counter.Count(i);
    counter.Count(op->value);
    stores.push_back(std::move(info));
  }

  void VisitAllocate(const ir::Allocate* op) override {
    AllocFrame frame;
    frame.buffer = op->buffer.get();
    frame.bytes = double(op->buffer->num_elements()) * op->buffer->dtype.bytes();
    frame.outer_iterations = CurrentIterations();
    frame.scope = op->buffer->scope;
    allocs_.push_back(frame);
    all_allocs.push_back(frame);
    Walk(op->body);
    allocs_.pop_back();
  }

  void VisitIfThenElse(const ir::IfThenElse* op) override {
    const bool lane_mask = std::any_of(context_.loops.begin(), context_.loops.end(), [&](const LoopFrame& l) {
      return l.kind == ir::ForKind::kVectorized && ir::UsesVar(op->cond, l.var);
    });
    ++predicates_;
    context_.lane_masks += lane_mask;
    Walk(op->then_case);
    if (op->else_case.defined()) Walk(op->else_case);
    context_.lane_masks -= lane_mask;
    --predicates_;
  }

  void VisitSeq(const ir::Seq* op) override {
    for (const Stmt& c : op->stmts) Walk(c);
  }
  void VisitBarrier(const ir::Barrier*) override {}  // stores are what the features describe

  LoopContext context_;
  std::vector<AllocFrame> allocs_;
  int predicates_ = 0;
};

// ---- footprints ----

// Distinct elements (and cache lines) an access touches while loops [from, depth) run.
struct Footprint {
  double elements = 0;
  double lines = 0;
};

Footprint AccessFootprint(const Access& a, const std::vector<LoopFrame>& loops, size_t from,
                          int line_bytes) {
  const size_t depth = loops.size();
  const std::vector<int64_t>& shape = a.buffer->shape;
  const int elem_bytes = a.buffer->dtype.bytes();
  Footprint f{1, 1};
  for (size_t d = 0; d < shape.size(); ++d) {
    double span = 1, count = 1, max_coef = 0;
    for (size_t k = from; k < depth; ++k) {
      double c = std::fabs(a.coef[d * depth + k]);
      if (c == 0) continue;
      span += c * double(loops[k].extent - 1);
      count *= double(loops[k].extent);
      max_coef = std::max(max_coef, c);
    }
    double unique = std::min({span, count, double(std::max<int64_t>(shape[d], 1))});
    f.elements *= unique;
    if (d + 1 == shape.size()) {
      const double line_elems = std::max(1.0, double(line_bytes) / elem_bytes);
      f.lines *= max_coef >= line_elems ? unique
                                        : std::ceil(std::min(span, double(shape[d])) / line_elems);
    } else {
      f.lines *= unique;
    }
  }
  return f;
}

// The store's buffers, merged over their access sites.
struct BufferSummary {
  const ir::BufferNode* buffer = nullptr;
  bool is_read = false;
  bool is_write = false;
  int accesses = 0;
  const Access* widest = nullptr;  // the site with the largest footprint
  double unique_elements = 0;
  double unique_lines = 0;
};

void FillStore(const StoreInfo& s, const FeatureOptions& options, float* out) {
  const std::vector<LoopFrame>& loops = s.loops;
  const size_t depth = loops.size();
  float* p = out;
  for (int i = 0; i < kArithFeatures; ++i) *p++ = Slog(s.ops[i] * s.iterations);

  // Loop nest. A loop is a reduction loop for this store when the stored index ignores it.
  const Access& store_access = s.accesses.front();
  auto invariant = [&](const Access& a, size_t k) {
    for (size_t d = 0; d < a.buffer->shape.size(); ++d) {
      if (a.coef[d * depth + k] != 0) return false;
    }
    return true;
  };
  int reduce_loops = 0;
  double reduce_iterations = 1;
  for (size_t k = 0; k < depth; ++k) {
    if (loops[k].extent > 1 && invariant(store_access, k)) {
      ++reduce_loops;
      reduce_iterations *= double(loops[k].extent);
    }
  }
  const double innermost = depth ? double(loops.back().extent) : 0;
  *p++ = float(depth);
  *p++ = Slog(s.iterations);
  *p++ = Slog(innermost);
  *p++ = Slog(depth ? s.iterations / innermost : 0);
  *p++ = float(reduce_loops);
  *p++ = Slog(reduce_iterations);
  *p++ = float(s.predicates);
  *p++ = s.is_update ? 1.f : 0.f;

  // Annotations.
  int vec_level = -1, vec_count = 0, unroll_count = 0, par_count = 0, thread_count = 0;
  int first_parallel = -1;
  double unroll_product = 1, par_extent = 1, thread_extent = 1;
  double auto_unrolled = 1;
  for (size_t k = 0; k < depth; ++k) {
    const LoopFrame& l = loops[k];
    if (l.unroll == analysis::Unroll::kExplicit) {
      ++unroll_count;
      unroll_product *= double(l.extent);
    }
    if (l.unroll == analysis::Unroll::kAuto) auto_unrolled *= double(l.extent);
    switch (l.kind) {
      case ir::ForKind::kVectorized: vec_level = int(k); ++vec_count; break;
      case ir::ForKind::kParallel:
        if (first_parallel < 0) first_parallel = int(k);
        ++par_count;
        par_extent *= double(l.extent);
        break;
      case ir::ForKind::kThreadBinding: ++thread_count; thread_extent *= double(l.extent); break;
      case ir::ForKind::kUnrolled:
      case ir::ForKind::kSerial: break;
    }
  }
  const int64_t auto_unroll = depth ? loops.back().auto_unroll_budget : 0;
  int gathers = 0;
  if (vec_level >= 0) {
    for (const Access& a : s.accesses) gathers += a.vector_gather;
  }
  const double cores = std::max(1, options.num_cores);
  double balance = 0, outer_serial = 1;
  if (par_count > 0) {
    balance = par_extent / (std::ceil(par_extent / cores) * cores);
    for (int k = 0; k < first_parallel; ++k) outer_serial *= double(loops[k].extent);
  }
  *p++ = depth && loops.back().kind == ir::ForKind::kVectorized ? 1.f : 0.f;
  *p++ = Slog(vec_level >= 0 ? double(loops[size_t(vec_level)].extent) : 0);
  *p++ = float(vec_count);
  *p++ = float(gathers);
  *p++ = float(unroll_count);
  *p++ = Slog(unroll_count ? unroll_product : 0);
  *p++ = depth && loops.back().unroll == analysis::Unroll::kExplicit ? 1.f : 0.f;
  *p++ = float(par_count);
  *p++ = Slog(par_count ? par_extent : 0);
  *p++ = Slog(par_count ? par_extent / cores : 0);
  *p++ = float(balance);
  *p++ = Slog(par_count ? outer_serial : 0);
  *p++ = Slog(double(auto_unroll));
  *p++ = Slog(auto_unroll > 0 ? auto_unrolled : 0);
  *p++ = float(thread_count);
  *p++ = Slog(thread_count ? thread_extent : 0);
  *p++ = Slog(double(depth ? loops.back().prefetch_ahead : 0));

  // Buffers: merge the access sites per buffer, keep the widest site of each.
  std::vector<BufferSummary> buffers;
  buffers.reserve(s.accesses.size());
  for (const Access& a : s.accesses) {
    Footprint f = AccessFootprint(a, loops, 0, options.cache_line_bytes);
    BufferSummary* b = nullptr;
    for (BufferSummary& existing : buffers) {
      if (existing.buffer == a.buffer) b = &existing;
    }
    if (!b) {
      buffers.push_back(BufferSummary{});
      b = &buffers.back();
      b->buffer = a.buffer;
    }
    (a.is_write ? b->is_write : b->is_read) = true;
    ++b->accesses;
    if (!b->widest || f.elements > b->unique_elements) {
      b->widest = &a;
      b->unique_elements = f.elements;
      b->unique_lines = f.lines;
    }
  }
  auto bytes_of = [](const BufferSummary& b) {
    return b.unique_elements * b.buffer->dtype.bytes();
  };
  std::sort(buffers.begin(), buffers.end(), [&](const BufferSummary& x, const BufferSummary& y) {
    if (bytes_of(x) != bytes_of(y)) return bytes_of(x) > bytes_of(y);
    if (x.accesses != y.accesses) return x.accesses > y.accesses;
    return x.buffer->name < y.buffer->name;
  });
  // Distinct bytes of all buffers inside loops [from, depth).
  auto total_unique_bytes = [&](size_t from) {
    double total = 0;
    for (const BufferSummary& b : buffers) {
      total += AccessFootprint(*b.widest, loops, from, options.cache_line_bytes).elements *
               b.buffer->dtype.bytes();
    }
    return total;
  };
  auto level_from = [&](size_t inner) { return depth > inner ? depth - inner : 0; };
  for (int j = 0; j < kBuffersPerStore; ++j) {
    if (size_t(j) >= buffers.size()) {
      std::memset(p, 0, sizeof(float) * kBufferFeatures);
      p += kBufferFeatures;
      continue;
    }
    const BufferSummary& b = buffers[size_t(j)];
    const Access& a = *b.widest;
    const int elem_bytes = b.buffer->dtype.bytes();
    *p++ = b.is_read ? 1.f : 0.f;
    *p++ = b.is_write ? 1.f : 0.f;
    *p++ = b.buffer->scope != ir::MemoryScope::kGlobal ? 1.f : 0.f;
    *p++ = float(b.accesses);
    *p++ = Slog(double(b.accesses) * s.iterations * elem_bytes);
    *p++ = Slog(b.unique_elements * elem_bytes);
    *p++ = Slog(b.unique_lines);
    for (size_t inner = 1; inner <= 3; ++inner) {
      *p++ = Slog(depth ? AccessFootprint(a, loops, level_from(inner), options.cache_line_bytes)
                                  .elements * elem_bytes
                        : elem_bytes);
    }
    const double stride = a.innermost_stride ? std::fabs(double(*a.innermost_stride)) : 0;
    *p++ = Slog(stride);
    *p++ = a.innermost == analysis::AccessPattern::kInvariant ? 1.f : 0.f;
    *p++ = a.innermost == analysis::AccessPattern::kUnitStride ? 1.f : 0.f;
    *p++ = a.innermost == analysis::AccessPattern::kStrided ? 1.f : 0.f;
    int reuse_level = -1;
    for (size_t k = depth; k-- > 0;) {
      if (loops[k].extent > 1 && invariant(a, k)) {
        reuse_level = int(k);
        break;
      }
    }
    if (reuse_level < 0) {
      *p++ = 0;
      *p++ = 0;
      *p++ = 0;
    } else {
      double dist = 1;
      for (size_t k = size_t(reuse_level) + 1; k < depth; ++k) dist *= double(loops[k].extent);
      *p++ = Slog(double(loops[size_t(reuse_level)].extent));
      *p++ = Slog(dist);
      *p++ = Slog(total_unique_bytes(size_t(reuse_level) + 1));
    }
  }

  // Arithmetic intensity per loop level.
  const double flops = s.FloatOpsPerIteration();
  for (size_t inner : {size_t(1), size_t(2), size_t(3), depth}) {
    size_t from = level_from(inner);
    double iters = 1;
    for (size_t k = from; k < depth; ++k) iters *= double(loops[k].extent);
    double bytes = total_unique_bytes(from);
    *p++ = Slog(bytes > 0 ? flops * iters / bytes : 0);
  }

  // Allocation of the stored buffer.
  if (s.has_alloc) {
    *p++ = Slog(s.alloc.bytes);
    *p++ = Slog(s.alloc.outer_iterations);
    *p++ = s.alloc.scope == ir::MemoryScope::kLocal ? 1.f : 0.f;
    *p++ = s.alloc.scope == ir::MemoryScope::kShared ? 1.f : 0.f;
    *p++ = s.alloc.scope == ir::MemoryScope::kGlobal ? 1.f : 0.f;
  } else {
    std::memset(p, 0, sizeof(float) * kAllocFeatures);
    p += kAllocFeatures;
  }
  TUNED_CHECK(p - out == kStoreFeatures) << "store block wrote " << (p - out) << " values";
}

std::vector<std::string> BuildNames() {
  std::vector<std::string> names;
  names.reserve(size_t(FeatureCount()));
  for (int i = 0; i < kTopStores; ++i) {
    const std::string s = "s" + std::to_string(i) + ".";
    for (const char* n : kArithNames) names.push_back(s + n);
    for (const char* n : kLoopNames) names.push_back(s + n);
    for (const char* n : kAnnotationNames) names.push_back(s + n);
    for (int j = 0; j < kBuffersPerStore; ++j) {
      const std::string b = s + "b" + std::to_string(j) + ".";
      for (const char* n : kBufferNames) names.push_back(b + n);
    }
    for (const char* n : kIntensityNames) names.push_back(s + n);
    for (const char* n : kAllocNames) names.push_back(s + n);
  }
  for (const char* n : kGlobalNames) names.push_back(std::string("g.") + n);
  for (const std::string& n : GpuFeatureNames()) names.push_back("gpu." + n);
  return names;
}

}  // namespace

int FeatureCount() { return kLoopFeatureCount + kGpuFeatures; }

const std::vector<std::string>& FeatureNames() {
  static const std::vector<std::string> names = BuildNames();
  return names;
}

std::vector<float> ExtractFeatures(const lower::LoweredFunc& func, const FeatureOptions& options) {
  std::vector<float> out(size_t(FeatureCount()), 0.f);
  Collector collector;
  if (func.body.defined()) collector.Walk(func.body);

  // Most iterations first; program order breaks ties, so the order is deterministic.
  std::vector<const StoreInfo*> order;
  order.reserve(collector.stores.size());
  for (const StoreInfo& s : collector.stores) order.push_back(&s);
  std::stable_sort(order.begin(), order.end(), [](const StoreInfo* a, const StoreInfo* b) {
    return a->iterations > b->iterations;
  });
  for (size_t i = 0; i < order.size() && i < size_t(kTopStores); ++i) {
    FillStore(*order[i], options, out.data() + i * kStoreFeatures);
  }

  double float_ops = 0, int_ops = 0, bytes = 0, rest_iterations = 0, rest_float_ops = 0;
  for (size_t i = 0; i < order.size(); ++i) {
    const StoreInfo& s = *order[i];
    float_ops += s.FloatOpsPerIteration() * s.iterations;
    int_ops += s.IntOpsPerIteration() * s.iterations;
    for (const Access& a : s.accesses) bytes += s.iterations * a.buffer->dtype.bytes();
    if (i >= size_t(kTopStores)) {
      rest_iterations += s.iterations;
      rest_float_ops += s.FloatOpsPerIteration() * s.iterations;
    }
  }
  double local_bytes = 0, global_bytes = 0, arg_bytes = 0;
  for (const AllocFrame& a : collector.all_allocs) {
    (a.scope == ir::MemoryScope::kGlobal ? global_bytes : local_bytes) += a.bytes;
  }
  for (const ir::Buffer& b : func.args) arg_bytes += double(b->num_elements()) * b->dtype.bytes();

  float* p = out.data() + kTopStores * kStoreFeatures;
  *p++ = Slog(float_ops);
  *p++ = Slog(int_ops);
  *p++ = Slog(bytes);
  *p++ = float(collector.stores.size());
  *p++ = float(collector.num_loops);
  *p++ = float(collector.max_depth);
  *p++ = float(collector.all_allocs.size());
  *p++ = Slog(local_bytes);
  *p++ = Slog(global_bytes);
  *p++ = Slog(arg_bytes);
  *p++ = float(collector.parallel_loops);
  *p++ = float(collector.vec_loops);
  *p++ = float(collector.unroll_loops);
  *p++ = Slog(double(std::max(1, options.num_cores)));
  *p++ = Slog(rest_iterations);
  *p++ = Slog(rest_float_ops);
  TUNED_CHECK(p == out.data() + kLoopFeatureCount) << "feature vector layout mismatch";
  for (float& v : out) {
    if (!std::isfinite(v)) v = 0.f;  // Defensive: degenerate shapes must not poison training.
  }
  return out;
}

std::vector<float> ExtractFeatures(const lower::LoweredFunc& func, const lower::gpu::GpuProgram& program,
                                   const FeatureOptions& options) {
  std::vector<float> out = ExtractFeatures(func, options);
  const std::vector<float> gpu = ExtractGpuFeatures(program, options.gpu.value_or(GpuFeatureOptions{}));
  std::copy(gpu.begin(), gpu.end(), out.begin() + kLoopFeatureCount);
  return out;
}

}  // namespace tuned::costmodel

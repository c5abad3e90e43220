#include "costmodel/features/gpu_features.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include "common/check.h"
#include "compiler/analysis/access.h"
#include "compiler/codegen/gpu/vector_access.h"
#include "compiler/ir/evaluator.h"
#include "compiler/ir/ir_mutator.h"

namespace tuned::costmodel {
namespace {

using ir::Expr;
using lower::gpu::GpuKernel;

constexpr int64_t kSectorBytes = 32;  // a global memory transaction
constexpr int64_t kBanks = 32;        // shared memory banks, each 4 bytes wide
constexpr int64_t kBankBytes = 4;

constexpr const char* kNames[kGpuFeatures] = {
    "kernels",         "threads_per_block", "blocks",         "warp_use",
    "shared_bytes",    "local_bytes",       "occupancy",      "barriers",
    "global_requests", "global_unit",       "global_invariant", "global_strided",
    "global_sectors",  "shared_requests",   "shared_conflict", "shared_conflict_max",
    "vector_requests"};

float Slog(double x) { return float(std::log2(std::fabs(x) + 1.0)); }

int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

// One load or store site of global or shared memory, as one warp requests it.
struct Request {
  bool shared = false;
  double executions = 0;  // by one thread
  bool vector = false;    // a float2/float4 access
  analysis::AccessPattern pattern = analysis::AccessPattern::kInvariant;  // along the lane axis
  double sectors = 0;     // global: 32-byte sectors of the warp request
  double conflict = 1;    // shared: bank-conflict degree of the warp request
};

// Lanes' byte ranges [lo, hi) of one warp request; empty when an offset cannot be evaluated.
struct LaneBytes {
  std::vector<std::pair<int64_t, int64_t>> ranges;
};

double SectorsOf(const LaneBytes& lanes, int64_t lane_count, int64_t request_bytes) {
  if (lanes.ranges.empty()) {
    return double(lane_count) * double((request_bytes + kSectorBytes - 1) / kSectorBytes);
  }
  std::set<int64_t> sectors;
  for (const auto& [lo, hi] : lanes.ranges) {
    for (int64_t s = FloorDiv(lo, kSectorBytes); s <= FloorDiv(hi - 1, kSectorBytes); ++s) sectors.insert(s);
  }
  return double(sectors.size());
}

// The most distinct words one bank serves, over the fewest passes the distinct words need.
double ConflictOf(const LaneBytes& lanes, int64_t lane_count) {
  if (lanes.ranges.empty()) return double(lane_count);
  std::set<int64_t> words;
  for (const auto& [lo, hi] : lanes.ranges) {
    for (int64_t w = FloorDiv(lo, kBankBytes); w <= FloorDiv(hi - 1, kBankBytes); ++w) words.insert(w);
  }
  std::map<int64_t, int64_t> per_bank;
  int64_t busiest = 0;
  for (int64_t w : words) busiest = std::max(busiest, ++per_bank[w - FloorDiv(w, kBanks) * kBanks]);
  const int64_t passes = (int64_t(words.size()) + kBanks - 1) / kBanks;
  return std::max(1.0, double(busiest) / double(passes));
}

// Walks one kernel body: its requests, the barriers and local bytes of one thread.
class KernelWalk : public ir::IRVisitor {
 public:
  KernelWalk(const GpuKernel& kernel, const GpuFeatureOptions& options) : kernel_(kernel) {
    lane_count_ = std::min<int64_t>(std::max(options.warp_size, 1), kernel.threads_per_block());
    for (const lower::gpu::ThreadAxis& axis : kernel.axes) {
      bounds_[axis.var.get()] = {0, axis.extent - 1};
      if (!lower::gpu::IsThreadIdx(axis.tag)) {
        values_[axis.var.get()] = 0;  // block 0
        continue;
      }
      const int d = lower::gpu::TagDimension(axis.tag);
      thread_vars_[size_t(d)] = axis.var.get();
      if (axis.extent > 1 && (lane_axis_ == nullptr || d < lane_dimension_)) {
        lane_axis_ = &axis.var;
        lane_dimension_ = d;
      }
    }
  }

  void Run() { Visit(kernel_.body); }

  std::vector<Request> requests;
  double barriers = 0;     // passed by one thread
  double local_bytes = 0;  // local arrays of one thread

 protected:
  void VisitFor(const ir::For* op) override {
    const ir::Interval min = ir::ConstBound(op->min, bounds_);
    const ir::Interval extent = ir::ConstBound(op->extent, bounds_);
    // The same bounds the printer gives a loop variable (its vector decision depends on them).
    if (min.bounded() && extent.bounded()) bounds_[op->var.get()] = {min.lo, min.hi + extent.hi - 1};
    std::optional<int64_t> first = Evaluate(op->min);
    if (first) values_[op->var.get()] = *first;
    const int64_t trips = extent.bounded() ? std::max<int64_t>(extent.hi, 0) : 1;

    const ir::VarNode* outer_vector = vector_var_;
    int64_t outer_width = vector_width_;
    if (op->kind == ir::ForKind::kVectorized) {
      ir::VarBounds outside = bounds_;
      outside.erase(op->var.get());
      auto aligned = [this](const ir::BufferNode* b) { return codegen::gpu::BaseAligned(kernel_, b); };
      if (std::optional<codegen::gpu::VectorLoop> plan = codegen::gpu::PlanVectorLoop(*op, outside, aligned)) {
        vector_var_ = op->var.get();
        vector_width_ = plan->width;
      }
    }
    const double outer_executions = executions_;
    executions_ *= double(trips);
    Visit(op->body);
    executions_ = outer_executions;
    vector_var_ = outer_vector;
    vector_width_ = outer_width;
    values_.erase(op->var.get());
  }

  void VisitStore(const ir::Store* op) override {
    Record(op->buffer, op->indices);
    IRVisitor::VisitStore(op);
  }

  void VisitLoad(const ir::Load* op) override {
    Record(op->buffer, op->indices);
    IRVisitor::VisitLoad(op);
  }

  void VisitAllocate(const ir::Allocate* op) override {
    if (op->buffer->scope == ir::MemoryScope::kLocal) {
      local_bytes += double(op->buffer->num_elements()) * op->buffer->dtype.bytes();
    }
    IRVisitor::VisitAllocate(op);
  }

  void VisitBarrier(const ir::Barrier*) override { barriers += executions_; }

 private:
  void Record(const ir::Buffer& buffer, const std::vector<Expr>& indices) {
    if (buffer->scope == ir::MemoryScope::kLocal) return;  // registers
    const Expr offset = analysis::RowMajorOffset(buffer->shape, indices);
    Request r;
    r.shared = buffer->scope == ir::MemoryScope::kShared;
    r.vector = vector_var_ != nullptr && ir::UsesVar(offset, vector_var_);
    const int64_t run = r.vector ? vector_width_ : 1;
    r.executions = executions_ / double(run);
    r.pattern = PatternOf(offset, run);
    const int64_t elem_bytes = buffer->dtype.bytes();
    const LaneBytes lanes = LaneRanges(offset, run * elem_bytes, elem_bytes);
    if (r.shared) {
      r.conflict = ConflictOf(lanes, lane_count_);
    } else {
      r.sectors = SectorsOf(lanes, lane_count_, run * elem_bytes);
    }
    requests.push_back(r);
  }

  // Unit stride means each lane's run right after the previous lane's.
  analysis::AccessPattern PatternOf(const Expr& offset, int64_t run) const {
    if (lane_axis_ == nullptr) return analysis::AccessPattern::kInvariant;
    const analysis::AccessAlong along = analysis::AnalyzeAccess(offset, *lane_axis_, bounds_);
    if (along.pattern == analysis::AccessPattern::kInvariant) return along.pattern;
    return along.stride == run ? analysis::AccessPattern::kUnitStride : analysis::AccessPattern::kStrided;
  }

  // Each lane of the first warp: its flat offset, as a byte range of `request_bytes`.
  LaneBytes LaneRanges(const Expr& offset, int64_t request_bytes, int64_t elem_bytes) {
    LaneBytes out;
    for (int64_t lane = 0; lane < lane_count_; ++lane) {
      int64_t rest = lane;
      for (size_t d = 0; d < 3; ++d) {
        if (thread_vars_[d]) values_[thread_vars_[d]] = rest % kernel_.block[d];
        rest /= kernel_.block[d];
      }
      std::optional<int64_t> element = Evaluate(offset);
      if (!element) return {};
      out.ranges.push_back({*element * elem_bytes, *element * elem_bytes + request_bytes});
    }
    return out;
  }

  std::optional<int64_t> Evaluate(const Expr& e) {
    ir::ExprEvaluator evaluator;
    evaluator.vars.swap(values_);
    const double value = evaluator.Eval(e);
    evaluator.vars.swap(values_);
    if (!evaluator.error().ok() || !std::isfinite(value)) return std::nullopt;
    return int64_t(value);
  }

  const GpuKernel& kernel_;
  ir::VarBounds bounds_;
  std::unordered_map<const ir::VarNode*, int64_t> values_;  // the sampled point of every variable
  const ir::VarNode* thread_vars_[3] = {nullptr, nullptr, nullptr};
  const ir::Var* lane_axis_ = nullptr;
  int lane_dimension_ = 3;
  int64_t lane_count_ = 1;
  double executions_ = 1;
  const ir::VarNode* vector_var_ = nullptr;  // the enclosing loop printed as vector accesses
  int64_t vector_width_ = 1;
};

// Resident warps per SM over the SM's warps (registers not counted).
double Occupancy(const GpuKernel& kernel, const GpuFeatureOptions& options) {
  const int64_t warp = std::max(options.warp_size, 1);
  const int64_t warps = (kernel.threads_per_block() + warp - 1) / warp;
  int64_t blocks = std::min(options.max_blocks_per_sm, options.max_threads_per_sm / (warps * warp));
  if (kernel.shared_bytes > 0) blocks = std::min(blocks, options.shared_bytes_per_sm / kernel.shared_bytes);
  return double(std::max<int64_t>(blocks, 0) * warps * warp) / double(std::max<int64_t>(options.max_threads_per_sm, 1));
}

// Sums over every request of every kernel, weighted by executions.
struct Totals {
  double global = 0, unit = 0, invariant = 0, strided = 0, sectors = 0;
  double shared = 0, conflict = 0, conflict_max = 0;
  double vector = 0;

  void Add(const Request& r, double threads) {
    const double n = r.executions * threads;
    if (r.vector) vector += n;
    if (r.shared) {
      shared += n;
      conflict += n * r.conflict;
      if (n > 0) conflict_max = std::max(conflict_max, r.conflict);
      return;
    }
    global += n;
    sectors += n * r.sectors;
    switch (r.pattern) {
      case analysis::AccessPattern::kUnitStride: unit += n; break;
      case analysis::AccessPattern::kInvariant: invariant += n; break;
      case analysis::AccessPattern::kStrided: strided += n; break;
    }
  }
};

double Ratio(double a, double b) { return b > 0 ? a / b : 0; }

}  // namespace

const std::vector<std::string>& GpuFeatureNames() {
  static const std::vector<std::string> names(std::begin(kNames), std::end(kNames));
  return names;
}

std::vector<float> ExtractGpuFeatures(const lower::gpu::GpuProgram& program, const GpuFeatureOptions& options) {
  double max_threads = 0, max_blocks = 0, max_shared = 0, max_local = 0, barriers = 0;
  double warp_use = program.kernels.empty() ? 0 : 1, occupancy = program.kernels.empty() ? 0 : 1;
  const double warp = double(std::max(options.warp_size, 1));
  Totals totals;
  for (const GpuKernel& kernel : program.kernels) {
    const double threads = double(kernel.threads_per_block());
    const double blocks = double(kernel.grid[0] * kernel.grid[1] * kernel.grid[2]);
    max_threads = std::max(max_threads, threads);
    max_blocks = std::max(max_blocks, blocks);
    max_shared = std::max(max_shared, double(kernel.shared_bytes));
    warp_use = std::min(warp_use, threads / (std::ceil(threads / warp) * warp));
    occupancy = std::min(occupancy, Occupancy(kernel, options));
    KernelWalk walk(kernel, options);
    walk.Run();
    max_local = std::max(max_local, walk.local_bytes);
    barriers += walk.barriers;
    for (const Request& r : walk.requests) totals.Add(r, threads * blocks);
  }
  std::vector<float> out = {
      float(program.kernels.size()),
      Slog(max_threads),
      Slog(max_blocks),
      float(warp_use),
      Slog(max_shared),
      Slog(max_local),
      float(occupancy),
      Slog(barriers),
      Slog(totals.global),
      float(Ratio(totals.unit, totals.global)),
      float(Ratio(totals.invariant, totals.global)),
      float(Ratio(totals.strided, totals.global)),
      float(Ratio(totals.sectors, totals.global)),
      Slog(totals.shared),
      float(Ratio(totals.conflict, totals.shared)),
      float(totals.conflict_max),
      float(Ratio(totals.vector, totals.global + totals.shared)),
  };
  TUNED_CHECK(out.size() == size_t(kGpuFeatures)) << "GPU block wrote " << out.size() << " values";
  for (float& v : out) {
    if (!std::isfinite(v)) v = 0.f;  // as the loop features: degenerate programs must not poison training
  }
  return out;
}

}  // namespace tuned::costmodel

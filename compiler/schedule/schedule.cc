// Schedule: RV bookkeeping, look-ups and sampling. The primitives that change loops live in
// loop_primitives.cc, those that move or create stages in compute_primitives.cc.

#include "compiler/schedule/schedule.h"

#include <algorithm>
#include <limits>
#include <numeric>

#include "common/check.h"

namespace tuned::schedule {

Schedule::Schedule(std::shared_ptr<const ir::Workload> workload, uint64_t seed)
    : state_(MakeInitialState(std::move(workload))), rng_(seed) {}

uint32_t Schedule::NewRV(RVValue v) {
  rvs_.push_back(v);
  return uint32_t(rvs_.size() - 1);
}

Instruction& Schedule::Record(InstKind kind, std::vector<TraceArg> inputs) {
  trace_.instructions.push_back({kind, std::move(inputs), {}, {}, {}, {}});
  return trace_.instructions.back();
}

StatusOr<int> Schedule::ResolveBlock(BlockRV b) const {
  if (b.id >= rvs_.size() || rvs_[b.id].kind != RVValue::Kind::kBlock) {
    return InvalidArgumentError("v" + std::to_string(b.id) + " is not a block");
  }
  int stage = rvs_[b.id].stage;
  if (!state_.stages[stage].is_live()) {
    return InvalidArgumentError("block " + state_.stages[stage].name + " was inlined");
  }
  return stage;
}

StatusOr<std::pair<int, int>> Schedule::ResolveLoop(LoopRV l) const {
  if (l.id >= rvs_.size() || rvs_[l.id].kind != RVValue::Kind::kLoop) {
    return InvalidArgumentError("v" + std::to_string(l.id) + " is not a loop");
  }
  return std::make_pair(rvs_[l.id].stage, rvs_[l.id].loop);
}

int64_t Schedule::Get(IntRV v) const {
  TUNED_CHECK(v.id < rvs_.size() && rvs_[v.id].kind == RVValue::Kind::kInt) << "v" << v.id;
  return rvs_[v.id].value;
}

int Schedule::StageOf(BlockRV b) const {
  TUNED_CHECK(b.id < rvs_.size() && rvs_[b.id].kind == RVValue::Kind::kBlock) << "v" << b.id;
  return rvs_[b.id].stage;
}

std::pair<int, int> Schedule::LoopOf(LoopRV l) const {
  TUNED_CHECK(l.id < rvs_.size() && rvs_[l.id].kind == RVValue::Kind::kLoop) << "v" << l.id;
  return {rvs_[l.id].stage, rvs_[l.id].loop};
}

std::string Schedule::LoopName(int stage, int loop) const {
  if (loop == kRootLocation) return "root";
  if (loop == kInlineLocation) return "inline";
  return state_.stages[stage].loops[loop].name + " of block " + state_.stages[stage].name;
}

std::string Schedule::Describe(LoopRV l) const {
  auto [stage, loop] = LoopOf(l);
  return LoopName(stage, loop);
}

StatusOr<BlockRV> Schedule::GetBlock(const std::string& name) {
  std::string names;
  for (int id : state_.order) {
    const Stage& st = state_.stages[id];
    if (st.name == name) {
      if (!st.is_live()) return InvalidArgumentError("get_block: block " + name + " was inlined");
      BlockRV rv{NewRV({RVValue::Kind::kBlock, id})};
      Record(InstKind::kGetBlock, {}).str_attrs = {name};
      trace_.instructions.back().outputs = {rv.id};
      return rv;
    }
    if (st.is_live()) names += (names.empty() ? "" : ", ") + st.name;
  }
  return InvalidArgumentError("get_block: no block named '" + name + "' (blocks: " + names + ")");
}

StatusOr<std::vector<LoopRV>> Schedule::GetLoops(BlockRV block) {
  TUNED_ASSIGN_OR_RETURN(int stage, ResolveBlock(block));
  std::vector<LoopRV> loops;
  std::vector<uint32_t> ids;
  for (int l : state_.stages[stage].leaves) {
    loops.push_back({NewRV({RVValue::Kind::kLoop, stage, l})});
    ids.push_back(loops.back().id);
  }
  Record(InstKind::kGetLoops, {TraceArg::RV(block.id)}).outputs = ids;
  return loops;
}

// ---- sampling ----

static std::vector<int64_t> PrimeFactors(int64_t n) {
  std::vector<int64_t> primes;
  for (int64_t p = 2; p * p <= n; ++p) {
    while (n % p == 0) {
      primes.push_back(p);
      n /= p;
    }
  }
  if (n > 1) primes.push_back(n);
  return primes;
}

StatusOr<std::vector<IntRV>> Schedule::SamplePerfectTile(LoopRV loop, int n, int max_innermost,
                                                         std::optional<std::vector<int64_t>> decision) {
  return SampleTileFactors(InstKind::kSamplePerfectTile, loop, n, max_innermost, 0, std::move(decision));
}

StatusOr<std::vector<IntRV>> Schedule::SampleTile(LoopRV loop, int n, int max_innermost,
                                                  int max_padding_percent,
                                                  std::optional<std::vector<int64_t>> decision,
                                                  int min_innermost) {
  return SampleTileFactors(InstKind::kSampleTile, loop, n, max_innermost, max_padding_percent,
                           std::move(decision), min_innermost);
}

namespace {

// The largest extent a loop of `extent` may be padded to within `max_padding_percent`
// (saturating: a fuzzed trace may carry any percentage).
int64_t MaxPaddedExtent(int64_t extent, int max_padding_percent) {
  const __int128 limit = __int128(extent) + __int128(extent) * max_padding_percent / 100;
  return limit > std::numeric_limits<int64_t>::max() ? std::numeric_limits<int64_t>::max() : int64_t(limit);
}

// The extents a loop of `extent` may be padded to within `max_padding_percent`: the extent
// itself and its round-ups to multiples of small powers of two (whose tiles factor well).
std::vector<int64_t> PaddedExtents(int64_t extent, int max_padding_percent) {
  std::vector<int64_t> padded = {extent};
  const int64_t limit = MaxPaddedExtent(extent, max_padding_percent);
  for (int64_t m = 2; m <= 256; m *= 2) {
    const int64_t up = (extent + m - 1) / m * m;
    if (up <= limit && std::find(padded.begin(), padded.end(), up) == padded.end()) padded.push_back(up);
  }
  return padded;
}

}  // namespace

StatusOr<std::vector<IntRV>> Schedule::SampleTileFactors(InstKind kind, LoopRV loop, int n, int max_innermost,
                                                         int max_padding_percent,
                                                         std::optional<std::vector<int64_t>> decision,
                                                         int min_innermost) {
  const std::string inst_name = InstKindName(kind);
  TUNED_ASSIGN_OR_RETURN(auto sl, ResolveLoop(loop));
  if (sl.second < 0) return InvalidArgumentError(inst_name + ": v" + std::to_string(loop.id) + " is not a loop");
  if (n < 1) return InvalidArgumentError(inst_name + ": n must be at least 1, got " + std::to_string(n));
  if (max_padding_percent < 0) {
    return InvalidArgumentError(inst_name + ": max_padding_percent must not be negative, got " +
                                std::to_string(max_padding_percent));
  }
  if (min_innermost < 1 || (max_innermost > 0 && min_innermost > max_innermost)) {
    return InvalidArgumentError(inst_name + ": min_innermost " + std::to_string(min_innermost) +
                                " outside [1, max_innermost " + std::to_string(max_innermost) + "]");
  }
  auto innermost_fits = [&](int64_t f) { return f >= min_innermost && (max_innermost <= 0 || f <= max_innermost); };
  const Stage& st = state_.stages[sl.first];
  int64_t extent = st.LoopExtents(st.RootExtents())[sl.second];
  const int64_t max_product = MaxPaddedExtent(extent, max_padding_percent);
  std::vector<int64_t> factors;
  if (decision) {
    factors = *decision;
    int64_t product = 1;
    bool positive = true;
    for (int64_t f : factors) {
      positive &= f >= 1;
      product *= std::max<int64_t>(f, 1);
      if (product > max_product) break;  // (also keeps the product from overflowing)
    }
    std::string what = inst_name + " of loop " + LoopName(sl.first, sl.second) + " (extent " +
                       std::to_string(extent) + "): decision of " + std::to_string(factors.size()) +
                       " factors";
    if (int(factors.size()) != n) return InvalidArgumentError(what + ", expected " + std::to_string(n));
    if (!positive) return InvalidArgumentError(what + " has a factor below 1");
    if (product < extent || product > max_product) {
      std::string wanted = max_product == extent ? "" : " (at most " + std::to_string(max_product) + " with padding)";
      return InvalidArgumentError(what + " multiplies to " + std::to_string(product) + wanted);
    }
    if (max_innermost > 0 && factors.back() > max_innermost) {
      return InvalidArgumentError(what + " has innermost factor " + std::to_string(factors.back()) +
                                  " over " + std::to_string(max_innermost));
    }
    if (factors.back() < min_innermost) {
      return InvalidArgumentError(what + " has innermost factor " + std::to_string(factors.back()) +
                                  " under " + std::to_string(min_innermost));
    }
  } else {
    std::vector<int64_t> padded = PaddedExtents(extent, max_padding_percent);
    const int64_t target = padded[std::uniform_int_distribution<size_t>(0, padded.size() - 1)(rng_)];
    std::vector<int64_t> primes = PrimeFactors(target);
    std::uniform_int_distribution<int> pick(0, n - 1);
    for (int attempt = 0; attempt < 64; ++attempt) {
      factors.assign(n, 1);
      for (int64_t p : primes) factors[pick(rng_)] *= p;
      if (innermost_fits(factors.back())) break;
    }
    if (!innermost_fits(factors.back())) {
      // No random split fit: the smallest divisor within the limits goes innermost, the rest
      // outermost (all of it outermost where no divisor fits and no minimum asks for one).
      int64_t inner = 1;
      for (int64_t d = min_innermost; d <= target && (max_innermost <= 0 || d <= max_innermost); ++d) {
        if (target % d == 0) {
          inner = d;
          break;
        }
      }
      factors.assign(n, 1);
      factors[0] = target / inner;
      factors[n - 1] *= inner;
      if (!innermost_fits(factors.back())) {
        return InvalidArgumentError(inst_name + " of loop " + LoopName(sl.first, sl.second) + " (extent " +
                                    std::to_string(extent) + "): no innermost factor in [" +
                                    std::to_string(min_innermost) + ", " + std::to_string(max_innermost) + "]");
      }
    }
    // Padding serves the inner factors (it lets them factor well); the outermost only has to
    // cover the extent. Any more would add outer iterations that are all padding: 18 tiles of
    // 16 where 17 cover 269, an empty tile in every row of a matmul's parallel loop.
    int64_t inner = 1;
    for (size_t i = 1; i < factors.size(); ++i) inner *= factors[i];
    if (factors.size() > 1) factors[0] = (extent + inner - 1) / inner;
  }
  std::vector<IntRV> outs;
  std::vector<uint32_t> ids;
  for (int64_t f : factors) {
    outs.push_back({NewRV({RVValue::Kind::kInt, -1, -1, f})});
    ids.push_back(outs.back().id);
  }
  Instruction& inst = Record(kind, {TraceArg::RV(loop.id)});
  inst.int_attrs = {n, max_innermost};
  if (kind == InstKind::kSampleTile) inst.int_attrs.push_back(max_padding_percent);
  if (min_innermost > 1) inst.int_attrs.push_back(min_innermost);
  inst.outputs = ids;
  trace_.decisions[int(trace_.instructions.size() - 1)] = factors;
  return outs;
}

StatusOr<IntRV> Schedule::SampleCategorical(const std::vector<int64_t>& candidates,
                                            const std::vector<double>& probabilities,
                                            std::optional<int64_t> decision) {
  if (candidates.empty() || candidates.size() != probabilities.size()) {
    return InvalidArgumentError("sample_categorical: " + std::to_string(candidates.size()) +
                                " candidates with " + std::to_string(probabilities.size()) +
                                " probabilities");
  }
  for (double p : probabilities) {
    if (!(p >= 0)) return InvalidArgumentError("sample_categorical: negative or NaN probability");
  }
  int64_t index;
  if (decision) {
    index = *decision;
    if (index < 0 || index >= int64_t(candidates.size())) {
      return InvalidArgumentError("sample_categorical: decision " + std::to_string(index) +
                                  " is not an index into " + std::to_string(candidates.size()) +
                                  " candidates");
    }
  } else {
    std::discrete_distribution<int64_t> dist(probabilities.begin(), probabilities.end());
    index = dist(rng_);
  }
  IntRV out{NewRV({RVValue::Kind::kInt, -1, -1, candidates[index]})};
  Instruction& inst = Record(InstKind::kSampleCategorical, {});
  inst.int_attrs = candidates;
  inst.float_attrs = probabilities;
  inst.outputs = {out.id};
  trace_.decisions[int(trace_.instructions.size() - 1)] = {index};
  return out;
}

std::vector<std::pair<int, int>> Schedule::ComputeLocations(int stage) const {
  const Stage& st = state_.stages[stage];
  std::vector<std::pair<int, int>> locations = {{-1, kRootLocation}};
  if (st.is_output) return locations;
  if (!st.is_reduction()) locations.push_back({-1, kInlineLocation});
  std::vector<int> consumers = state_.ConsumersOf(stage);
  if (consumers.size() == 1) {
    int consumer = consumers[0];
    for (int l : state_.stages[consumer].leaves) locations.push_back({consumer, l});
  }
  return locations;
}

StatusOr<LoopRV> Schedule::SampleComputeLocation(BlockRV block, std::optional<int64_t> decision) {
  TUNED_ASSIGN_OR_RETURN(int stage, ResolveBlock(block));
  std::vector<std::pair<int, int>> locations = ComputeLocations(stage);
  int64_t index;
  if (decision) {
    index = *decision;
    if (index < 0 || index >= int64_t(locations.size())) {
      return InvalidArgumentError("sample_compute_location of block " + state_.stages[stage].name +
                                  ": decision " + std::to_string(index) + " is not one of " +
                                  std::to_string(locations.size()) + " locations");
    }
  } else {
    index = std::uniform_int_distribution<int64_t>(0, int64_t(locations.size()) - 1)(rng_);
  }
  auto [loc_stage, loc_loop] = locations[index];
  LoopRV out{NewRV({RVValue::Kind::kLoop, loc_stage, loc_loop})};
  Record(InstKind::kSampleComputeLocation, {TraceArg::RV(block.id)}).outputs = {out.id};
  trace_.decisions[int(trace_.instructions.size() - 1)] = {index};
  return out;
}

}  // namespace tuned::schedule

#include "tests/support/gpu_schedules.h"

#include <random>

#include "common/check.h"

namespace tuned::testing {

using schedule::BlockRV;
using schedule::Factor;
using schedule::LoopRV;
using schedule::Schedule;

namespace {

template <typename T>
T Must(StatusOr<T> value) {
  TUNED_CHECK(value.ok()) << value.status().message();
  return std::move(value).value();
}
void Must(const Status& status) { TUNED_CHECK(status.ok()) << status.message(); }

int64_t Rand(std::mt19937_64& rng, int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
}
bool Chance(std::mt19937_64& rng, double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; }

// Fuses a staging block's loops and lets the block's threads fill it: the fused loop split by
// the thread counts, innermost first, the parts bound to the given threadIdx axes. With a
// vector width above 1, the innermost loop is first split by it and the inner part vectorized,
// so each thread copies runs of that many elements.
Status ShareAmongThreads(Schedule& sch, BlockRV stage, const std::vector<std::pair<std::string, int64_t>>& axes,
                         int64_t vector_width = 1) {
  TUNED_ASSIGN_OR_RETURN(std::vector<LoopRV> loops, sch.GetLoops(stage));
  if (vector_width > 1) {
    TUNED_ASSIGN_OR_RETURN(std::vector<LoopRV> runs, sch.Split(loops.back(), {std::monostate{}, vector_width}));
    TUNED_RETURN_IF_ERROR(sch.Vectorize(runs[1]));
    loops.back() = runs[0];
  }
  LoopRV fused = loops[0];
  if (loops.size() > 1) {
    TUNED_ASSIGN_OR_RETURN(fused, sch.Fuse(loops));
  }
  std::vector<Factor> factors = {std::monostate{}};
  for (const auto& axis : axes) factors.push_back(axis.second);
  TUNED_ASSIGN_OR_RETURN(std::vector<LoopRV> parts, sch.Split(fused, factors));
  for (size_t a = 0; a < axes.size(); ++a) TUNED_RETURN_IF_ERROR(sch.Bind(parts[a + 1], axes[a].first));
  return Status::Ok();
}

}  // namespace

Schedule GpuTiledMatmul(std::shared_ptr<const ir::Workload> w, const MatmulTiles& t) {
  Schedule sch(std::move(w), 0);
  BlockRV c = Must(sch.GetBlock("C"));
  std::vector<LoopRV> loops = Must(sch.GetLoops(c));
  std::vector<LoopRV> i = Must(sch.Split(loops[0], {std::monostate{}, t.threads_m, t.block_m / t.threads_m}));
  std::vector<LoopRV> j = Must(sch.Split(loops[1], {std::monostate{}, t.threads_n, t.block_n / t.threads_n}));
  std::vector<LoopRV> k = Must(sch.Split(loops[2], {std::monostate{}, t.tile_k}));
  Must(sch.Reorder({i[0], j[0], i[1], j[1], k[0], k[1], i[2], j[2]}));
  Must(sch.Bind(i[0], "blockIdx.y"));
  Must(sch.Bind(j[0], "blockIdx.x"));
  Must(sch.Bind(i[1], "threadIdx.y"));
  Must(sch.Bind(j[1], "threadIdx.x"));
  BlockRV write_back = Must(sch.CacheWrite(c, "local"));
  Must(sch.ReverseComputeAt(write_back, j[1]));
  for (int read = 0; read < 2; ++read) {
    BlockRV shared = Must(sch.CacheRead(c, read, "shared"));
    Must(sch.ComputeAt(shared, k[0]));
    Must(ShareAmongThreads(sch, shared, {{"threadIdx.y", t.threads_m}, {"threadIdx.x", t.threads_n}},
                           t.fill_vector));
  }
  Must(sch.Unroll(k[1]));
  return sch;
}

Schedule RandomGpuSchedule(std::shared_ptr<const ir::Workload> w, uint64_t seed) {
  Schedule sch(std::move(w), seed);
  std::mt19937_64 rng(seed * 104729 + 3);
  // Vectorized fills draw from their own stream, so the rest of a seed's schedule stays as it was.
  std::mt19937_64 vector_rng(seed * 7919 + 5);
  std::vector<std::string> names;
  for (int id : sch.state().order) names.push_back(sch.state().stages[id].name);
  for (const std::string& name : names) {
    auto block = sch.GetBlock(name);
    if (block.ok() && Chance(rng, 0.3)) (void)sch.ComputeInline(*block);
  }
  for (const std::string& name : names) {
    auto block = sch.GetBlock(name);
    if (!block.ok()) continue;
    const schedule::Stage& stage = sch.state().stages[size_t(sch.StageOf(*block))];
    if (!stage.is_live() || stage.attach != schedule::AttachKind::kRoot) continue;
    bool reduction = stage.is_reduction();
    std::vector<LoopRV> loops = Must(sch.GetLoops(*block));
    size_t spatial = stage.axes.size();
    if (spatial == 0) continue;
    std::vector<LoopRV> spatial_loops(loops.begin(), loops.begin() + long(spatial));
    LoopRV fused = spatial == 1 ? spatial_loops[0] : Must(sch.Fuse(spatial_loops));
    const std::vector<int64_t> thread_counts = {1, 3, 4, 7, 8, 16, 32, 33, 64};
    int64_t threads = thread_counts[size_t(Rand(rng, 0, int64_t(thread_counts.size()) - 1))];
    int64_t per_thread = Chance(rng, 0.3) ? Rand(rng, 2, 3) : 1;
    std::vector<Factor> factors = {std::monostate{}, threads};
    if (per_thread > 1) factors.push_back(per_thread);
    std::vector<LoopRV> parts = Must(sch.Split(fused, factors));
    Must(sch.Bind(parts[0], "blockIdx.x"));
    Must(sch.Bind(parts[1], "threadIdx.x"));
    if (per_thread > 1 && Chance(rng, 0.5)) Must(sch.Unroll(parts[2]));
    std::vector<LoopRV> locations = {parts[0], parts[1]};
    if (reduction && Chance(rng, 0.7)) {
      std::vector<LoopRV> k = Must(sch.Split(loops[spatial], {std::monostate{}, Rand(rng, 2, 5)}));
      locations.push_back(k[0]);
      if (Chance(rng, 0.4)) Must(sch.Unroll(k[1]));
    }
    if (reduction && Chance(rng, 0.4)) {
      auto write_back = sch.CacheWrite(*block, "local");
      if (write_back.ok()) (void)sch.ReverseComputeAt(*write_back, parts.back());
    }
    size_t reads = sch.state().ReadBuffers(sch.StageOf(*block)).size();
    if (reads > 0 && Chance(rng, 0.7)) {
      auto shared = sch.CacheRead(*block, int(Rand(rng, 0, int64_t(reads) - 1)), "shared");
      if (shared.ok()) {
        LoopRV at = locations[size_t(Rand(rng, 0, int64_t(locations.size()) - 1))];
        if (sch.ComputeAt(*shared, at).ok()) {
          int64_t width = Chance(vector_rng, 0.5) ? (Chance(vector_rng, 0.5) ? 4 : 2) : 1;
          (void)ShareAmongThreads(sch, *shared, {{"threadIdx.x", threads}}, width);
        }
      }
    }
  }
  return sch;
}

}  // namespace tuned::testing

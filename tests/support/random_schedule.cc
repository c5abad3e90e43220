#include "tests/support/random_schedule.h"

#include <algorithm>
#include <random>

namespace tuned::testing {

using schedule::BlockRV;
using schedule::LoopRV;
using schedule::Schedule;

namespace {

template <typename T>
const T& Pick(std::mt19937_64& rng, const std::vector<T>& items) {
  return items[std::uniform_int_distribution<size_t>(0, items.size() - 1)(rng)];
}

int64_t Rand(std::mt19937_64& rng, int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
}

std::vector<std::string> LiveBlocks(const Schedule& sch) {
  std::vector<std::string> names;
  for (int id : sch.state().order) {
    if (sch.state().stages[id].is_live()) names.push_back(sch.state().stages[id].name);
  }
  return names;
}

void Step(Schedule& sch, std::mt19937_64& rng) {
  std::vector<std::string> names = LiveBlocks(sch);
  StatusOr<BlockRV> block = sch.GetBlock(Pick(rng, names));
  if (!block.ok()) return;
  StatusOr<std::vector<LoopRV>> loops = sch.GetLoops(*block);
  if (!loops.ok() || loops->empty()) return;
  LoopRV loop = Pick(rng, *loops);
  switch (Rand(rng, 0, 12)) {
    case 0:
    case 1: {  // split: sampled perfect or padded tiles, or a literal factor that may not divide
      if (int64_t kind = Rand(rng, 0, 2); kind < 2) {
        const int levels = int(Rand(rng, 2, 3));
        auto tiles = kind == 0 ? sch.SamplePerfectTile(loop, levels, /*max_innermost=*/16)
                               : sch.SampleTile(loop, levels, /*max_innermost=*/16, /*max_padding_percent=*/25);
        if (!tiles.ok()) return;
        std::vector<schedule::Factor> factors(tiles->begin(), tiles->end());
        (void)sch.Split(loop, factors);
      } else {
        (void)sch.Split(loop, {std::monostate{}, Rand(rng, 2, 5)});
      }
      return;
    }
    case 2: {
      std::vector<LoopRV> order = *loops;
      std::shuffle(order.begin(), order.end(), rng);
      (void)sch.Reorder(order);
      return;
    }
    case 3: {
      if (loops->size() < 2) return;
      size_t i = size_t(Rand(rng, 0, int64_t(loops->size()) - 2));
      (void)sch.Fuse({(*loops)[i], (*loops)[i + 1]});
      return;
    }
    case 4: (void)sch.Parallel(loop); return;
    case 5: (void)sch.Vectorize(loops->back()); return;
    case 6: (void)sch.Unroll(loop); return;
    case 7: (void)sch.Annotate(loop, "auto_unroll_max_step", Pick(rng, std::vector<int64_t>{0, 16, 64})); return;
    case 8: {  // stage a read buffer, then move it to a sampled location
      size_t reads = sch.state().ReadBuffers(sch.StageOf(*block)).size();
      if (reads == 0) return;
      auto cache = sch.CacheRead(*block, int(Rand(rng, 0, int64_t(reads) - 1)),
                                 Rand(rng, 0, 1) ? "local" : "global");
      if (!cache.ok()) return;
      auto location = sch.SampleComputeLocation(*cache);
      if (location.ok()) (void)sch.ComputeAt(*cache, *location);
      return;
    }
    case 9: {  // register tile: cache_write and copy back at a loop of the producer
      auto wb = sch.CacheWrite(*block, "local");
      if (!wb.ok()) return;
      auto new_loops = sch.GetLoops(*block);
      if (!new_loops.ok()) return;
      (void)sch.ReverseComputeAt(*wb, Pick(rng, *new_loops));
      return;
    }
    case 10: {
      auto location = sch.SampleComputeLocation(*block);
      if (location.ok()) (void)sch.ComputeAt(*block, *location);
      return;
    }
    case 11: (void)sch.ComputeInline(*block); return;
    case 12: (void)sch.DecomposeReduction(*block, Pick(rng, *loops)); return;
  }
}

}  // namespace

Schedule RandomSchedule(std::shared_ptr<const ir::Workload> workload, uint64_t seed, int steps) {
  Schedule sch(std::move(workload), seed);
  std::mt19937_64 rng(seed * 7919 + 17);
  for (int i = 0; i < steps; ++i) Step(sch, rng);
  return sch;
}

std::vector<std::string> SmallSpecs(uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto r = [&](int lo, int hi) { return std::to_string(Rand(rng, lo, hi)); };
  return {
      "matmul(M=" + r(1, 12) + ",N=" + r(1, 12) + ",K=" + r(1, 9) + ")",
      "batch_matmul(B=" + r(1, 3) + ",M=" + r(1, 6) + ",N=" + r(1, 6) + ",K=" + r(1, 6) + ")",
      "dense(M=" + r(1, 8) + ",N=" + r(1, 8) + ",K=" + r(1, 8) + ",bias=true,relu=true)",
      "conv2d_nchw(N=1,C=" + r(1, 3) + ",H=" + r(3, 7) + ",W=" + r(3, 7) + ",F=" + r(1, 3) +
          ",R=3,S=3,stride=" + r(1, 2) + ",pad=" + r(0, 1) + ")",
      "conv2d_nhwc(N=1,C=" + r(1, 3) + ",H=" + r(3, 6) + ",W=" + r(3, 6) + ",F=" + r(1, 3) +
          ",R=3,S=3,pad=1,dilation=" + r(1, 2) + ")",
      "depthwise_conv2d(N=1,C=" + r(1, 3) + ",H=" + r(3, 7) + ",W=" + r(3, 7) + ",pad=1)",
      "reduce_rows(M=" + r(1, 9) + ",N=" + r(1, 9) + ",kind=max)",
      "softmax(M=" + r(1, 6) + ",N=" + r(1, 9) + ")",
      "add(M=" + r(1, 9) + ",N=" + r(1, 9) + ")",
      "relu(M=" + r(1, 9) + ",N=" + r(1, 9) + ")",
      "matmul(M=" + r(1, 8) + ",N=" + r(1, 8) + ",K=" + r(1, 8) + ",dtype=int8)",
      "matmul(M=" + r(1, 8) + ",N=" + r(1, 8) + ",K=" + r(1, 8) + ",dtype=float16)",
      "matmul(M=" + r(1, 8) + ",N=" + r(1, 8) + ",K=" + r(1, 8) + ",dtype=float64)",
  };
}

}  // namespace tuned::testing

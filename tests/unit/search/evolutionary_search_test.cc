#include <set>

#include <gtest/gtest.h>

#include "compiler/ir/ir_printer.h"
#include "compiler/ir/op_library.h"
#include "compiler/lower/lower.h"
#include "compiler/lower/pipeline.h"
#include "compiler/schedule/trace.h"
#include "costmodel/model/cost_model.h"
#include "server/search/design_space.h"
#include "server/search/evolutionary_search.h"
#include "server/search/mutator.h"

namespace tuned::search {
namespace {

SearchContext ContextFor(const std::string& spec, uint64_t seed = 1) {
  SearchContext ctx;
  ctx.workload = std::make_shared<const ir::Workload>(*ir::ParseWorkloadSpec(spec));
  ctx.target = "llvm -mcpu=znver3 -num-cores=2";
  ctx.num_cores = 2;
  ctx.seed = seed;
  return ctx;
}

// A synthetic "measurement": faster for larger innermost tiles, deterministic in the trace.
v1::MeasureResult FakeMeasure(const v1::Trace& trace) {
  double score = 1;
  for (const auto& d : trace.decisions()) {
    if (d.values_size() > 1) score += double(d.values(d.values_size() - 1));
  }
  v1::MeasureResult result;
  result.set_status(v1::MEASURE_STATUS_OK);
  result.set_median_seconds(1e-3 / score);
  return result;
}

TEST(Mutators, TileSizeKeepsTheProductAndTheInnermostLimit) {
  SearchContext ctx = ContextFor("matmul(M=64,N=48,K=32)");
  auto sch = SampleSketch(ctx, GenerateSketches(ctx)[0], 3);
  ASSERT_TRUE(sch.ok());
  auto mutator = MakeMutateTileSize();
  std::mt19937_64 rng(9);
  std::set<std::vector<int64_t>> seen;
  for (int i = 0; i < 200; ++i) {
    auto decisions = mutator->Apply(sch->trace(), rng);
    ASSERT_TRUE(decisions.has_value());
    for (const auto& [index, values] : *decisions) {
      const auto& old = sch->trace().decisions.at(index);
      int64_t a = 1, b = 1;
      for (int64_t v : old) a *= v;
      for (int64_t v : values) b *= v;
      EXPECT_EQ(a, b);
      EXPECT_NE(values, old);
      EXPECT_LE(values.back(), sch->trace().instructions[index].int_attrs[1]);
      seen.insert(values);
    }
    auto replayed = schedule::ReplayTrace(ctx.workload, sch->trace(), 0, *decisions);
    ASSERT_TRUE(replayed.ok()) << replayed.status().message();
    EXPECT_TRUE(lower::Lower(*replayed).ok());
  }
  EXPECT_GT(seen.size(), 5u);
}

TEST(Mutators, EveryDefaultMutatorFiresOnTheDesignSpace) {
  // A mutator whose decision no design-space rule samples could never change a candidate.
  for (const char* spec : {"matmul(M=64,N=48,K=32)", "conv2d_nchw(N=1,C=4,H=8,W=8,F=8,pad=1)", "softmax(M=8,N=64)"}) {
    SearchContext ctx = ContextFor(spec);
    std::vector<Sketch> sketches = GenerateSketches(ctx);
    for (const auto& [mutator, probability] : DefaultCpuMutators()) {
      EXPECT_GT(probability, 0) << mutator->name();
      std::mt19937_64 rng(4);
      bool fired = false;
      for (uint64_t seed = 0; seed < 8 && !fired; ++seed) {
        auto sch = SampleSketch(ctx, sketches[seed % sketches.size()], seed);
        ASSERT_TRUE(sch.ok()) << spec;
        fired = mutator->Apply(sch->trace(), rng).has_value();
      }
      EXPECT_TRUE(fired) << mutator->name() << " never applies to a candidate of " << spec;
    }
  }
}

TEST(Mutators, UnrollPicksAnotherCategory) {
  SearchContext ctx = ContextFor("matmul(M=16,N=16,K=16)");
  auto sch = SampleSketch(ctx, GenerateSketches(ctx)[0], 3);
  ASSERT_TRUE(sch.ok());
  std::mt19937_64 rng(1);
  auto decisions = MakeMutateUnroll()->Apply(sch->trace(), rng);
  ASSERT_TRUE(decisions.has_value());
  for (const auto& [index, values] : *decisions) {
    EXPECT_NE(values, sch->trace().decisions.at(index));
    EXPECT_LT(values[0], int64_t(UnrollSteps().size()));
  }
}

// A small evolutionary search (population 32, 2 generations) of `ctx`, with its own model and
// the given share of random samples.
struct SmallSearch {
  explicit SmallSearch(const SearchContext& ctx, double epsilon = EvolutionaryOptions().epsilon) {
    auto made = costmodel::MakeXgbCostModel();
    EXPECT_TRUE(made.ok());
    model = std::move(made).value();
    EvolutionaryOptions options;
    options.population = 32;
    options.rounds = 2;
    options.epsilon = epsilon;
    auto made_search = MakeEvolutionarySearch(ctx, model.get(), options);
    EXPECT_TRUE(made_search.ok()) << made_search.status().message();
    search = std::move(made_search).value();
  }
  std::unique_ptr<costmodel::CostModel> model;
  std::unique_ptr<SearchStrategy> search;
};

std::vector<std::string> RunSearch(uint64_t seed, int rounds, std::set<std::string>* all) {
  SmallSearch small(ContextFor("matmul(M=32,N=32,K=16)", seed));
  auto& search = small.search;
  std::vector<std::string> order;
  for (int r = 0; r < rounds; ++r) {
    auto batch = search->NextBatch(8);
    EXPECT_TRUE(batch.ok());
    std::vector<MeasuredCandidate> results;
    for (const Candidate& c : *batch) {
      order.push_back(c.trace_hash);
      if (all) {
        EXPECT_TRUE(all->insert(c.trace_hash).second) << "trace proposed twice";
      }
      results.push_back({c.trace, FakeMeasure(c.trace)});
    }
    EXPECT_TRUE(search->Update(results).ok());
  }
  return order;
}

TEST(EvolutionarySearch, NeverProposesATraceTwice) {
  std::set<std::string> all;
  std::vector<std::string> order = RunSearch(5, 6, &all);
  EXPECT_EQ(order.size(), 48u);
}

TEST(EvolutionarySearch, NeverProposesTwoTracesThatLowerToTheSameProgram) {
  // A 24 x 24 x 8 matmul: many sampled tiles are 1, so an unroll annotation on such a loop
  // lowers away and traces that differ only in it are one kernel.
  SearchContext ctx = ContextFor("matmul(M=24,N=24,K=8)", 3);
  SmallSearch small(ctx);
  auto& search = small.search;
  std::set<std::string> programs;
  int proposed = 0;
  for (int r = 0; r < 6; ++r) {
    auto batch = search->NextBatch(8);
    ASSERT_TRUE(batch.ok()) << batch.status().message();
    std::vector<MeasuredCandidate> results;
    for (const Candidate& c : *batch) {
      auto trace = lower::ParseTraceProto(c.trace);
      ASSERT_TRUE(trace.ok());
      auto sch = schedule::ReplayTrace(ctx.workload, *trace, 0);
      ASSERT_TRUE(sch.ok()) << sch.status().message();
      auto func = lower::Lower(*sch);
      ASSERT_TRUE(func.ok()) << func.status().message();
      EXPECT_TRUE(programs.insert(ir::ToString(func->body)).second) << "a program proposed twice:\n" << ir::ToString(func->body);
      ++proposed;
      results.push_back({c.trace, FakeMeasure(c.trace)});
    }
    ASSERT_TRUE(search->Update(results).ok());
  }
  EXPECT_GE(proposed, 40);  // the space holds more than enough distinct programs
}

TEST(EvolutionarySearch, IsDeterministicForAFixedSeedAndResults) {
  EXPECT_EQ(RunSearch(11, 4, nullptr), RunSearch(11, 4, nullptr));
  EXPECT_NE(RunSearch(11, 2, nullptr), RunSearch(12, 2, nullptr));
}

bool Packs(const v1::Trace& trace) {
  for (const auto& inst : trace.instructions()) {
    if (inst.kind() == "cache_read") return true;
  }
  return false;
}

TEST(EvolutionarySearch, EverySketchHasCandidatesInEveryBatch) {
  // The packing sketch measures ten times slower here, so the model soon ranks its candidates
  // last; with no random share, only the sketches' quota keeps it in the batches.
  SearchContext ctx = ContextFor("matmul(M=32,N=32,K=16)", 3);
  ASSERT_GE(GenerateSketches(ctx).size(), 3u);
  SmallSearch small(ctx, /*epsilon=*/0);
  auto& search = small.search;
  for (int round = 0; round < 6; ++round) {
    auto batch = search->NextBatch(8);
    ASSERT_TRUE(batch.ok()) << batch.status().message();
    std::vector<MeasuredCandidate> results;
    int packed = 0;
    for (const Candidate& c : *batch) {
      v1::MeasureResult result = FakeMeasure(c.trace);
      if (Packs(c.trace)) {
        ++packed;
        result.set_median_seconds(result.median_seconds() * 10);
      }
      results.push_back({c.trace, result});
    }
    EXPECT_GE(packed, 1) << "round " << round;
    ASSERT_TRUE(search->Update(results).ok());
  }
}

TEST(EvolutionarySearch, RejectsBadOptions) {
  SearchContext ctx = ContextFor("matmul(M=8,N=8,K=8)");
  auto model = costmodel::MakeRandomCostModel(1);
  EvolutionaryOptions bad;
  bad.epsilon = 2;
  EXPECT_EQ(MakeEvolutionarySearch(ctx, model.get(), bad).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(MakeEvolutionarySearch(ctx, nullptr).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tuned::search

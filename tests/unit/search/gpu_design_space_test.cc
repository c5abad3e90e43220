// The GPU design space: every sample of every library op either runs on the target (lowers to
// race-free kernels within the target's limits that compute the reference) or is dropped by the
// candidate check with a counted reason; mutated GPU traces replay; the searches propose only
// candidates that fit.

#include <gtest/gtest.h>

#include "compiler/codegen/gpu/gpu_source.h"
#include "compiler/ir/evaluator.h"
#include "compiler/ir/op_library.h"
#include "compiler/lower/gpu/lower_gpu.h"
#include "compiler/lower/interpreter.h"
#include "compiler/lower/pipeline.h"
#include "compiler/schedule/trace.h"
#include "server/search/candidate_check.h"
#include "server/search/design_space.h"
#include "server/search/gpu_design_space.h"
#include "server/search/mutator.h"
#include "server/search/random_search.h"
#include "target/target.h"
#include "tests/support/random_schedule.h"

namespace tuned::search {
namespace {

SearchContext GpuContext(const std::string& spec, const std::string& target) {
  auto w = ir::ParseWorkloadSpec(spec);
  EXPECT_TRUE(w.ok()) << spec;
  SearchContext ctx;
  ctx.workload = std::make_shared<const ir::Workload>(std::move(w).value());
  ctx.target = target;
  ctx.vector_lanes = 1;
  return ctx;
}

lower::gpu::GpuLimits LimitsOfText(const std::string& text) {
  auto target = target::ParseTarget(text);
  EXPECT_TRUE(target.ok()) << text;
  return codegen::gpu::LimitsOf(*target);
}

// Lowers a checked candidate to kernels and runs it in the race-checking interpreter.
void ExpectRunsAndMatches(const SearchContext& ctx, const schedule::Schedule& sch, uint64_t seed) {
  auto program = lower::gpu::LowerGpu(sch, LimitsOfText(ctx.target));
  ASSERT_TRUE(program.ok()) << program.status().message() << "\n" << sch.trace().ToString();
  auto inputs = ir::RandomInputs(*ctx.workload, seed);
  auto reference = ir::EvaluateReference(*ctx.workload, inputs);
  ASSERT_TRUE(reference.ok());
  auto actual = lower::InterpretGpu(*program, inputs);
  ASSERT_TRUE(actual.ok()) << actual.status().message() << "\n" << sch.trace().ToString();
  EXPECT_LE(ir::MaxRelativeError(*actual, reference->at(ctx.workload->output_stage().name)),
            ir::ToleranceFor(ctx.workload->output_stage().output->dtype))
      << ctx.workload->key() << "\n" << sch.trace().ToString();
}

// Every sketch: the tiled one, and for reductions with fewer outputs than terms (reduce_rows,
// softmax) the one that reduces across the threads of a block.
TEST(GpuDesignSpace, EverySampleRunsOrIsDroppedWithACountedReason) {
  int valid = 0, dropped = 0, valid_tiled = 0, valid_cross_thread = 0;
  for (uint64_t shape_seed = 1; shape_seed <= 2; ++shape_seed) {
    for (const std::string& spec : testing::SmallSpecs(shape_seed)) {
      SearchContext ctx = GpuContext(spec, "cuda -arch=sm_90");
      std::vector<Sketch> sketches = GenerateSketches(ctx);
      ASSERT_GE(sketches.size(), 1u) << spec;
      EXPECT_EQ(sketches[0].name, "gpu-tile");
      CandidateCheck check(ctx);
      int spec_valid = 0;
      for (const Sketch& sketch : sketches) {
        for (uint64_t seed = 0; seed < 6; ++seed) {
          auto sch = SampleSketch(ctx, sketch, seed);
          ASSERT_TRUE(sch.ok()) << spec << ": " << sch.status().message();
          if (!check.Check(*sch).ok()) continue;
          ++spec_valid;
          if (sketch.name == "gpu-cross-thread") ++valid_cross_thread;
          ExpectRunsAndMatches(ctx, *sch, seed);
          auto replayed = schedule::ReplayTrace(ctx.workload, sch->trace(), seed + 7);
          ASSERT_TRUE(replayed.ok()) << replayed.status().message();
          if (sch->trace().ToString().find("shared") != std::string::npos) ++valid_tiled;
        }
      }
      int spec_dropped = 0;
      for (const auto& [reason, count] : check.dropped()) spec_dropped += count;
      EXPECT_EQ(spec_valid + spec_dropped, 6 * int(sketches.size())) << spec << ": " << check.DroppedSummary();
      valid += spec_valid;
      dropped += spec_dropped;
    }
  }
  std::printf("GPU design space: %d valid (%d reducing across threads), %d dropped\n", valid, valid_cross_thread,
              dropped);
  EXPECT_GT(valid, 20);
  EXPECT_GT(valid_tiled, 5);  // shared staging with cooperative fetch among the valid ones
  EXPECT_GT(valid_cross_thread, 5);
}

// The sketch reducing across threads is there only for reductions with fewer outputs than terms.
TEST(GpuDesignSpace, FewOutputsOfManyTermsAlsoGetTheCrossThreadSketch) {
  for (const auto& [spec, sketches] : std::vector<std::pair<std::string, size_t>>{
           {"matmul(M=64,N=64,K=64)", 1}, {"conv2d_nchw(C=4,H=8,W=8,F=8,pad=1)", 1}, {"add(M=64,N=64)", 1},
           {"reduce_rows(M=4,N=4096)", 2}, {"softmax(M=8,N=1000)", 2}, {"matmul(M=1,N=64,K=4096)", 2}}) {
    SearchContext ctx = GpuContext(spec, "cuda -arch=sm_90");
    std::vector<Sketch> generated = GenerateSketches(ctx);
    ASSERT_EQ(generated.size(), sketches) << spec;
    if (sketches == 1) continue;
    EXPECT_EQ(generated[1].name, "gpu-cross-thread");
    CandidateCheck check(ctx);
    int valid = 0;
    for (uint64_t seed = 0; seed < 4; ++seed) {
      auto sch = SampleSketch(ctx, generated[1], seed);
      ASSERT_TRUE(sch.ok()) << spec << ": " << sch.status().message();
      if (!check.Check(*sch).ok()) continue;
      ++valid;
      auto program = lower::gpu::LowerGpu(*sch, LimitsOfText(ctx.target));
      ASSERT_TRUE(program.ok()) << program.status().message();
      bool shared = false;  // the partials of the reduction kernel's threads
      for (const auto& kernel : program->kernels) shared = shared || kernel.shared_bytes > 0;
      EXPECT_TRUE(shared) << spec;
      if (seed == 0) ExpectRunsAndMatches(ctx, *sch, seed);
    }
    EXPECT_GT(valid, 0) << spec << ": " << check.DroppedSummary();
  }
}

TEST(GpuDesignSpace, MatmulAndConvHaveValidTiledCandidatesWithSharedStaging) {
  for (const std::string& spec : {std::string("matmul(M=64,N=64,K=64)"),
                                  std::string("conv2d_nchw(C=4,H=8,W=8,F=8,pad=1)")}) {
    SearchContext ctx = GpuContext(spec, "cuda -arch=sm_90");
    CandidateCheck check(ctx);
    int valid = 0, with_shared = 0, with_vector_fetch = 0;
    for (uint64_t seed = 0; seed < 24; ++seed) {
      auto sch = SampleSketch(ctx, GenerateSketches(ctx)[0], seed);
      ASSERT_TRUE(sch.ok()) << sch.status().message();
      if (!check.Check(*sch).ok()) continue;
      ++valid;
      auto program = lower::gpu::LowerGpu(*sch, LimitsOfText(ctx.target));
      ASSERT_TRUE(program.ok());
      ASSERT_EQ(program->kernels.size(), 1u) << spec;  // the whole workload in one kernel
      if (program->kernels[0].shared_bytes > 0) ++with_shared;
      std::string source = codegen::gpu::PrintGpuSource(*program, codegen::gpu::Dialect::kCuda);
      if (source.find("float4") != std::string::npos || source.find("float2") != std::string::npos) {
        ++with_vector_fetch;
      }
      if (valid <= 3) ExpectRunsAndMatches(ctx, *sch, seed);
    }
    EXPECT_GE(valid, 4) << spec << ": " << check.DroppedSummary();
    EXPECT_EQ(with_shared, valid) << spec;
    if (spec.rfind("matmul", 0) == 0) {
      EXPECT_GT(with_vector_fetch, 0) << spec;
    }
  }
}

TEST(GpuDesignSpace, CandidatesBeyondTheTargetsLimitsAreDroppedAndCounted) {
  // A tiny device: at most 16 threads per block and 512 bytes of shared memory.
  SearchContext ctx = GpuContext("matmul(M=64,N=64,K=64)", "opencl -max-work-group-size=16 -local-memory-bytes=512");
  const lower::gpu::GpuLimits limits = LimitsOfText(ctx.target);
  CandidateCheck check(ctx);
  int valid = 0;
  for (uint64_t seed = 0; seed < 40; ++seed) {
    auto sch = SampleSketch(ctx, GenerateSketches(ctx)[0], seed);
    ASSERT_TRUE(sch.ok());
    if (!check.Check(*sch).ok()) continue;
    ++valid;
    auto program = lower::gpu::LowerGpu(*sch, lower::gpu::NoGpuLimits());
    ASSERT_TRUE(program.ok());
    for (const auto& kernel : program->kernels) {
      EXPECT_LE(kernel.threads_per_block(), 16);
      EXPECT_LE(kernel.shared_bytes, 512);
      EXPECT_EQ(lower::gpu::ExceededLimit(kernel, limits), lower::gpu::GpuLimitKind::kNone);
    }
  }
  EXPECT_GT(valid, 0);
  EXPECT_GT(check.dropped().count("threads_per_block") + check.dropped().count("shared_bytes"), 0u)
      << check.DroppedSummary();
  int dropped = 0;
  for (const auto& [reason, count] : check.dropped()) dropped += count;
  EXPECT_EQ(valid + dropped, 40) << check.DroppedSummary();
}

TEST(GpuDesignSpace, MutatedTracesReplayAndKeepTheirStructure) {
  SearchContext ctx = GpuContext("matmul(M=64,N=64,K=64)", "cuda -arch=sm_90");
  auto mutators = DefaultGpuMutators();
  ASSERT_EQ(mutators.size(), 2u);
  std::mt19937_64 rng(5);
  int replayed_valid = 0, categorical = 0;
  CandidateCheck check(ctx);
  for (uint64_t seed = 0; seed < 12; ++seed) {
    auto sch = SampleSketch(ctx, GenerateSketches(ctx)[0], seed);
    ASSERT_TRUE(sch.ok());
    for (const auto& [mutator, probability] : mutators) {
      auto decisions = mutator->Apply(sch->trace(), rng);
      ASSERT_TRUE(decisions.has_value()) << mutator->name();  // tiles and categories exist
      if (mutator->name() == "mutate_categorical") ++categorical;
      auto child = schedule::ReplayTrace(ctx.workload, sch->trace(), seed, *decisions);
      ASSERT_TRUE(child.ok()) << mutator->name() << ": " << child.status().message();
      if (check.Check(*child).ok()) {
        ++replayed_valid;
        if (replayed_valid <= 4) ExpectRunsAndMatches(ctx, *child, seed);
      }
    }
  }
  EXPECT_EQ(categorical, 12);
  EXPECT_GT(replayed_valid, 0) << check.DroppedSummary();
}

TEST(GpuDesignSpace, RandomSearchProposesOnlyCandidatesThatFit) {
  SearchContext ctx = GpuContext("matmul(M=32,N=32,K=32)", "opencl -max-work-group-size=64 -local-memory-bytes=4096");
  auto search = MakeRandomSearch(ctx);
  ASSERT_TRUE(search.ok());
  auto batch = (*search)->NextBatch(8);
  ASSERT_TRUE(batch.ok()) << batch.status().message();
  ASSERT_EQ(batch->size(), 8u);
  for (const Candidate& c : *batch) {
    auto trace = lower::ParseTraceProto(c.trace);
    ASSERT_TRUE(trace.ok());
    auto sch = schedule::ReplayTrace(ctx.workload, *trace);
    ASSERT_TRUE(sch.ok());
    auto program = lower::gpu::LowerGpu(*sch, LimitsOfText(ctx.target));
    EXPECT_TRUE(program.ok()) << program.status().message();
  }
}

TEST(GpuDesignSpace, CpuTargetsKeepTheCpuRules) {
  SearchContext ctx = GpuContext("matmul(M=32,N=32,K=32)", "llvm -mcpu=znver3 -num-cores=2");
  EXPECT_FALSE(IsGpuContext(ctx));
  for (const Sketch& s : GenerateSketches(ctx)) EXPECT_NE(s.name, "gpu-tile");
  EXPECT_TRUE(IsGpuContext(GpuContext("matmul(M=32,N=32,K=32)", "opencl")));
}

}  // namespace
}  // namespace tuned::search

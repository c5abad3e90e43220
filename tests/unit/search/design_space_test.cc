// Every sketch of every library op samples, lowers and computes the reference result, for
// several shapes; the random search never proposes a trace twice.

#include <regex>
#include <set>

#include <gtest/gtest.h>

#include "compiler/ir/evaluator.h"
#include "compiler/ir/ir_printer.h"
#include "compiler/ir/op_library.h"
#include "compiler/lower/interpreter.h"
#include "compiler/lower/lower.h"
#include "server/search/design_space.h"
#include "server/search/random_search.h"
#include "tests/support/random_schedule.h"
#include "tests/unit/search/search_test_context.h"
#include "tests/unit/search/sketch_test_fixture.h"

namespace tuned::search {
namespace {


TEST(DesignSpace, EverySketchOfEveryOpLowersAndComputesTheReference) {
  for (uint64_t shape_seed = 1; shape_seed <= 4; ++shape_seed) {
    for (const std::string& spec : testing::SmallSpecs(shape_seed)) {
      SearchContext ctx = ContextFor(spec);
      std::vector<Sketch> sketches = GenerateSketches(ctx);
      ASSERT_FALSE(sketches.empty()) << spec;
      auto inputs = ir::RandomInputs(*ctx.workload, shape_seed);
      auto reference = ir::EvaluateReference(*ctx.workload, inputs);
      ASSERT_TRUE(reference.ok());
      const auto& expected = reference->at(ctx.workload->output_stage().name);
      for (const Sketch& sketch : sketches) {
        for (uint64_t seed = 0; seed < 6; ++seed) {
          auto sch = SampleSketch(ctx, sketch, seed);
          ASSERT_TRUE(sch.ok()) << spec << " " << sketch.name << ": " << sch.status().message();
          auto func = lower::Lower(*sch);
          ASSERT_TRUE(func.ok()) << spec << " " << sketch.name << ": " << func.status().message()
                                 << "\n" << sch->trace().ToString();
          auto actual = lower::Interpret(*func, inputs);
          ASSERT_TRUE(actual.ok()) << actual.status().message() << "\n" << ir::ToString(func->body);
          EXPECT_LE(ir::MaxRelativeError(*actual, expected),
                    ir::ToleranceFor(ctx.workload->output_stage().output->dtype))
              << spec << " " << sketch.name << " seed " << seed << "\n" << ir::ToString(func->body);
          auto replayed = schedule::ReplayTrace(ctx.workload, sch->trace(), seed + 7);
          ASSERT_TRUE(replayed.ok()) << replayed.status().message();
        }
      }
    }
  }
}

TEST(DesignSpace, PrimeAndOddExtentsSampleLowerablePaddedTiles) {
  // Sizes of real models that tile badly: primes, odd channel counts, 1000-way classifiers.
  for (const char* spec : {"matmul(M=37,N=29,K=41)", "matmul(M=257,N=127,K=263)",
                           "matmul(M=1000,N=1000,K=1000)", "dense(M=1,N=1000,K=513,bias=true)"}) {
    SearchContext ctx = ContextFor(spec);
    int padded = 0;
    for (const Sketch& sketch : GenerateSketches(ctx)) {
      for (uint64_t seed = 0; seed < 24; ++seed) {
        auto sch = SampleSketch(ctx, sketch, seed);
        ASSERT_TRUE(sch.ok()) << spec << " " << sketch.name << ": " << sch.status().message();
        auto func = lower::Lower(*sch);
        ASSERT_TRUE(func.ok()) << spec << " " << sketch.name << " seed " << seed << ": "
                               << func.status().message() << "\n" << sch->trace().ToString();
        // A padded tile leaves a guard in the program before lowering hoists it.
        auto guarded = lower::Lower(*sch, "kernel", {.hoist_guards = false});
        ASSERT_TRUE(guarded.ok()) << guarded.status().message();
        padded += ir::ToString(guarded->body).find("if (") != std::string::npos;
        // The reference check on the small shape (the interpreter is slow on large ones).
        if (ctx.workload->flops() < 2e5) {
          auto inputs = ir::RandomInputs(*ctx.workload, seed);
          auto reference = ir::EvaluateReference(*ctx.workload, inputs);
          ASSERT_TRUE(reference.ok());
          auto actual = lower::Interpret(*func, inputs);
          ASSERT_TRUE(actual.ok()) << actual.status().message();
          EXPECT_LE(ir::MaxRelativeError(*actual, reference->at(ctx.workload->output_stage().name)),
                    ir::ToleranceFor(ctx.workload->output_stage().output->dtype))
              << spec << " " << sketch.name << " seed " << seed;
        }
      }
    }
    EXPECT_GT(padded, 0) << spec << ": no sample padded a tile";
  }
}

TEST(DesignSpace, APrimeNumberOfVectorsTilesIntoRegisterRowsOfSeveralVectors) {
  // 133 columns are 17 vectors of 8 lanes: a perfect tile of 17 holds one vector per register
  // row, a padded one (18 or 20) two to four. Their edge tiles compute what the reference does.
  SearchContext ctx = ContextFor("matmul(M=16,N=133,K=8)");
  int several = 0;
  for (const Sketch& sketch : GenerateSketches(ctx)) {
    for (uint64_t seed = 0; seed < 24; ++seed) {
      auto sch = SampleSketch(ctx, sketch, seed);
      ASSERT_TRUE(sch.ok()) << sketch.name << ": " << sch.status().message();
      const schedule::Trace& trace = sch->trace();
      for (const auto& [index, factors] : trace.decisions) {
        const schedule::Instruction& inst = trace.instructions[size_t(index)];
        // The tile of the vector count: three levels of at most four vectors.
        if (inst.kind != schedule::InstKind::kSampleTile || inst.int_attrs[1] != 4) continue;
        int64_t product = 1;
        for (int64_t f : factors) product *= f;
        several += product > 17 && factors.back() > 1;
      }
      auto func = lower::Lower(*sch);
      ASSERT_TRUE(func.ok()) << sketch.name << " seed " << seed << ": " << func.status().message();
      auto inputs = ir::RandomInputs(*ctx.workload, seed);
      auto reference = ir::EvaluateReference(*ctx.workload, inputs);
      ASSERT_TRUE(reference.ok());
      auto actual = lower::Interpret(*func, inputs);
      ASSERT_TRUE(actual.ok()) << actual.status().message();
      EXPECT_LE(ir::MaxRelativeError(*actual, reference->at("C")), 1e-5) << sketch.name << " seed " << seed;
    }
  }
  EXPECT_GT(several, 0) << "no sample padded the 17 vectors to a tile of several";
}

TEST(DesignSpace, RegisterTilesFitInTheVectorRegisters) {
  // A 7x7 image of 64 channels (8 vectors of 8 lanes): rows of 7 or 8 (padded) in both image
  // axes and four vectors would be 224 accumulators. The target's 16 registers less the two
  // operands hold 14: every sampled register tile fits, and some fill more than half of them.
  SearchContext ctx = ContextFor("conv2d_nchw(N=1,C=16,H=7,W=7,F=64,R=3,S=3,pad=1)");
  ASSERT_EQ(ctx.vector_registers, 16);
  int64_t largest = 0;
  for (const Sketch& sketch : GenerateSketches(ctx)) {
    if (sketch.name.find("short-vector") != std::string::npos) continue;  // lanes, not vectors
    for (uint64_t seed = 0; seed < 40; ++seed) {
      auto sch = SampleSketch(ctx, sketch, seed);
      ASSERT_TRUE(sch.ok()) << sketch.name << ": " << sch.status().message();
      const schedule::Trace& trace = sch->trace();
      // The innermost factors of the spatial loops' three-level tiles: rows, and vectors (a
      // vector axis narrower than a vector tiles its lanes, up to four vectors' worth: one register).
      int64_t accumulators = 1;
      for (const auto& [index, factors] : trace.decisions) {
        const schedule::Instruction& inst = trace.instructions[size_t(index)];
        if (inst.kind != schedule::InstKind::kSampleTile || factors.size() != 3) continue;
        if (inst.int_attrs[1] == 4 * kTestLanes) continue;
        accumulators *= factors.back();
      }
      EXPECT_LE(accumulators, 14) << sketch.name << " seed " << seed << "\n" << trace.ToString();
      largest = std::max(largest, accumulators);
    }
  }
  EXPECT_GE(largest, 8);
}

TEST(DesignSpace, MatmulHasPackingSketchAndRegisterTile) {
  SearchContext ctx = ContextFor("matmul(M=64,N=64,K=64)");
  std::vector<Sketch> sketches = GenerateSketches(ctx);
  ASSERT_EQ(sketches.size(), 3u);
  EXPECT_EQ(sketches[1].name, "tile+pack");
  auto sch = SampleSketch(ctx, sketches[1], 3);
  ASSERT_TRUE(sch.ok());
  std::string program = ir::ToString(lower::Lower(*sch)->body);
  EXPECT_NE(program.find("C_local"), std::string::npos) << program;
  EXPECT_NE(program.find("B_global"), std::string::npos) << program;
  EXPECT_NE(program.find("parallel"), std::string::npos) << program;
  EXPECT_NE(program.find("vectorized"), std::string::npos) << program;
}

// A constant weight's panel (a model's GEMV) is laid out once, by the prepack entry, in blocks of
// the columns one middle tile reads: [N/T][K][T], so the hot loops stream through one run of
// memory instead of a few vectors of every row. The kernel only reads it.
using PackSketchTest = SketchTest;
TEST_F(PackSketchTest, AConstantPanelIsPrepackedInTheTilesItsConsumerReads) {
  SearchContext ctx = ContextFor(
      "tdl: input A: float32[1, 64]; input B: const float32[64, 100]; "
      "matmul[i: 1, j: 100]: float32 = sum[ri: 64](A[i, ri] * B[ri, j])");
  std::vector<Sketch> sketches = GenerateSketches(ctx);
  const Sketch* pack = FindSketch(sketches, "tile+pack");
  ASSERT_NE(pack, nullptr);
  int blocked = 0;
  for (uint64_t seed = 0; seed < 8; ++seed) {
    auto sch = SampleSketch(ctx, *pack, seed);
    ASSERT_TRUE(sch.ok()) << sch.status().message();
    auto func = lower::Lower(*sch);
    ASSERT_TRUE(func.ok()) << func.status().message();
    ASSERT_TRUE(func->prepack.defined()) << ir::ToString(func->body);
    ASSERT_EQ(func->num_packed, 1u);
    const std::vector<int64_t>& panel = func->args[2]->shape;
    const std::string body = ir::ToString(func->body);
    EXPECT_EQ(body.find("allocate B_global"), std::string::npos) << body;
    if (panel.size() == 3) {
      // Blocks of whole vectors (100 columns are 12 and a masked half): the last block is
      // partly unused, and the kernel never reads its unused part (checked below).
      EXPECT_EQ(panel[1], 64) << body;
      EXPECT_EQ(panel[2] % kTestLanes, 0) << body;
      EXPECT_GE(panel[0] * panel[2], 100) << body;
      EXPECT_LT((panel[0] - 1) * panel[2], 100) << body;
      ++blocked;
    } else {
      EXPECT_EQ(panel, (std::vector<int64_t>{64, 100})) << body;
    }
  }
  EXPECT_GT(blocked, 0) << "no sample laid the panel out in blocks";
  EXPECT_EQ(SampleAndCheck(ctx, "tile+pack", 8).size(), 8u);
}

// A 28-wide row on 8-lane vectors: whole vectors leave a masked 4-lane tail in every row; the
// short-vector sketches tile it into vectors of 7, 4 or 2 lanes (divisors of 28), unguarded.
TEST(DesignSpace, RowsWholeVectorsDoNotDivideGetShortVectorSketches) {
  SearchContext ctx = ContextFor("matmul(M=16,N=28,K=8)");
  std::vector<std::string> names;
  for (const Sketch& sketch : GenerateSketches(ctx)) names.push_back(sketch.name);
  EXPECT_EQ(names, (std::vector<std::string>{"tile", "tile+pack", "tile+short-vector", "tile+pack+short-vector",
                                              "tile+other-vector-axis", "tile+reduce-outside"}));
  std::set<int64_t> widths;
  for (const Sketch& sketch : GenerateSketches(ctx)) {
    if (sketch.name.find("short-vector") == std::string::npos) continue;
    for (uint64_t seed = 0; seed < 24; ++seed) {
      auto sch = SampleSketch(ctx, sketch, seed);
      ASSERT_TRUE(sch.ok()) << sch.status().message();
      auto func = lower::Lower(*sch, "kernel", {.hoist_guards = false});
      ASSERT_TRUE(func.ok()) << func.status().message();
      std::string program = ir::ToString(func->body);
      EXPECT_EQ(program.find("if ("), std::string::npos) << program;
      // The vectorized innermost tile of the main nest: "for C.j_2 in [0, +W) vectorized".
      std::smatch match;
      ASSERT_TRUE(std::regex_search(program, match, std::regex(R"(for C\.j_2 in \[0, \+(\d+)\) vectorized)")))
          << program;
      int64_t width = std::stoll(match[1]);
      EXPECT_LE(width, 8) << program;
      EXPECT_EQ(28 % width, 0) << program;
      widths.insert(width);
    }
  }
  EXPECT_GT(widths.size(), 1u) << "the width is a sampled decision";
  // Whole vectors divide 64 and nothing divides the prime 257: no short-vector sketch (but 257
  // is a poor vector axis, and M = 16 a whole-vector one).
  EXPECT_EQ(GenerateSketches(ContextFor("matmul(M=16,N=64,K=8)")).size(), 3u);
  EXPECT_EQ(GenerateSketches(ContextFor("matmul(M=16,N=257,K=8)")).size(), 4u);
}

// S R S R S: each block of the reduction sweeps the whole middle tile, its accumulator a buffer
// of the outer tile copied back once every reduction loop is done.
TEST(DesignSpace, ReduceOutsideSketchSweepsTheMiddleTilesInsideEachReductionBlock) {
  SearchContext ctx = ContextFor("matmul(M=1,N=128,K=48)");  // a GEMV
  const Sketch* sketch = nullptr;
  std::vector<Sketch> sketches = GenerateSketches(ctx);
  for (const Sketch& s : sketches) {
    if (s.name == "tile+reduce-outside") sketch = &s;
  }
  ASSERT_NE(sketch, nullptr);
  auto inputs = ir::RandomInputs(*ctx.workload, 1);
  auto reference = ir::EvaluateReference(*ctx.workload, inputs);
  ASSERT_TRUE(reference.ok());
  int swept = 0;
  for (uint64_t seed = 0; seed < 8; ++seed) {
    auto sch = SampleSketch(ctx, *sketch, seed);
    ASSERT_TRUE(sch.ok()) << sch.status().message();
    auto func = lower::Lower(*sch, "kernel", {.hoist_guards = false});
    ASSERT_TRUE(func.ok()) << func.status().message() << "\n" << sch->trace().ToString();
    std::string program = ir::ToString(func->body);
    // The outer reduction loop opens before the middle spatial loop (where both are more than
    // one iteration); the copy-back follows them.
    size_t reduce_outer = program.find("for C.ri_0 in");
    size_t middle = program.find("for C.j_0_1 in");
    size_t copy_back = program.find("for C_local.");
    if (reduce_outer != std::string::npos && middle != std::string::npos) {
      ++swept;
      EXPECT_LT(reduce_outer, middle) << program;
      EXPECT_GT(copy_back, middle) << program;
    }
    auto actual = lower::Interpret(*func, inputs);
    ASSERT_TRUE(actual.ok()) << actual.status().message();
    EXPECT_LE(ir::MaxRelativeError(*actual, reference->at("C")), 1e-4) << program;
  }
  EXPECT_GT(swept, 0) << "no sample had both a reduction block and a middle tile";
  // Nothing to reduce, no such sketch.
  for (const Sketch& s : GenerateSketches(ContextFor("add(M=8,N=64)"))) EXPECT_EQ(s.name, "tile");
}

TEST(DesignSpace, DenseEpilogueIsFusedIntoTheAccumulatorCopy) {
  SearchContext ctx = ContextFor("dense(M=16,N=16,K=8,bias=true,relu=true)");
  auto sch = SampleSketch(ctx, GenerateSketches(ctx)[0], 1);
  ASSERT_TRUE(sch.ok()) << sch.status().message();
  std::string program = ir::ToString(lower::Lower(*sch)->body);
  // No intermediate dense/bias_add buffer: the copy-back writes relu directly.
  EXPECT_EQ(program.find("allocate dense:"), std::string::npos) << program;
  EXPECT_EQ(program.find("allocate bias_add"), std::string::npos) << program;
  EXPECT_NE(program.find("relu["), std::string::npos) << program;
}

TEST(RandomSearch, NeverProposesATraceTwiceAndStopsWhenExhausted) {
  SearchContext ctx = ContextFor("matmul(M=2,N=2,K=1)");
  auto search = MakeRandomSearch(ctx);
  ASSERT_TRUE(search.ok());
  std::set<std::string> hashes;
  for (int round = 0; round < 50; ++round) {
    auto batch = (*search)->NextBatch(16);
    ASSERT_TRUE(batch.ok());
    for (const Candidate& c : *batch) EXPECT_TRUE(hashes.insert(c.trace_hash).second);
    if (batch->empty()) break;
  }
  EXPECT_GT(hashes.size(), 10u);
  auto last = (*search)->NextBatch(16);
  ASSERT_TRUE(last.ok());
  EXPECT_TRUE(last->empty()) << "a space of a 2x2x1 matmul is small; the search must run out";
}

}  // namespace
}  // namespace tuned::search

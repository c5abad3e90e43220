// The reduction-lanes sketches: a reduction along a contiguous row (softmax's maximum and sum, a
// mean over the last axis, a matrix-vector product along the matrix's rows) is vectorized along
// its reduction axis through rfactor, and with fused rows computed inside the output's row loop.
// Each candidate is checked through the interpreter and the JIT against the reference.

#include <regex>

#include <gtest/gtest.h>

#include "compiler/codegen/llvm/llvm_jit.h"
#include "compiler/ir/evaluator.h"
#include "compiler/ir/ir_printer.h"
#include "compiler/lower/interpreter.h"
#include "compiler/lower/lower.h"
#include "server/search/design_space.h"
#include "server/search/vector_axis.h"
#include "tests/unit/compiler/codegen/codegen_test_util.h"
#include "tests/unit/search/search_test_context.h"

namespace tuned::search {
namespace {

// Softmax as the model importer writes it (model/operators.cc): row results keep a trailing
// extent of 1, and the quotient reads two row reductions. 100 columns: lanes of 8, 16 or 32
// leave a partial last step.
constexpr const char* kModelSoftmax =
    "tdl: input data: float32[6, 100]; "
    "row_max[i: 6, j: 1]: float32 = max[ri: 100](data[i, ri]); "
    "exp[i: 6, j: 100]: float32 = exp(data[i, j] - row_max[i, 0]); "
    "row_sum[i: 6, j: 1]: float32 = sum[ri: 100](exp[i, ri]); "
    "out[i: 6, j: 100]: float32 = exp[i, j] / row_sum[i, 0]";

const Sketch* FindSketch(const std::vector<Sketch>& sketches, const std::string& name) {
  for (const Sketch& s : sketches) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

int Count(const std::string& text, const std::string& pattern) {
  const std::regex re(pattern);
  return int(std::distance(std::sregex_iterator(text.begin(), text.end(), re), std::sregex_iterator()));
}

class RowReductionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto jit = codegen::LlvmJit::Create(codegen::testing::HostTarget());
    ASSERT_TRUE(jit.ok()) << jit.status().message();
    jit_ = std::move(jit).value();
  }

  // Samples `seeds` candidates of the named sketch, checks each through the interpreter and the
  // JIT; returns their lowered programs.
  std::vector<std::string> SampleAndCheck(const SearchContext& ctx, const std::string& name, int seeds) {
    std::vector<Sketch> sketches = GenerateSketches(ctx);
    const Sketch* sketch = FindSketch(sketches, name);
    EXPECT_NE(sketch, nullptr) << name << " for " << ctx.workload->key();
    if (sketch == nullptr) return {};
    auto inputs = ir::RandomInputs(*ctx.workload, 1);
    auto reference = ir::EvaluateReference(*ctx.workload, inputs);
    EXPECT_TRUE(reference.ok());
    const std::vector<double>& expected = reference->at(ctx.workload->output_stage().name);
    const double tolerance = ir::ToleranceFor(ctx.workload->output_stage().output->dtype);
    std::vector<std::string> programs;
    for (int seed = 0; seed < seeds; ++seed) {
      auto sch = SampleSketch(ctx, *sketch, uint64_t(seed));
      EXPECT_TRUE(sch.ok()) << name << ": " << sch.status().message();
      if (!sch.ok()) continue;
      auto func = lower::Lower(*sch);
      EXPECT_TRUE(func.ok()) << func.status().message() << "\n" << sch->trace().ToString();
      if (!func.ok()) continue;
      std::string program = ir::ToString(func->body);
      auto interpreted = lower::Interpret(*func, inputs);
      EXPECT_TRUE(interpreted.ok()) << interpreted.status().message();
      if (interpreted.ok()) EXPECT_LE(ir::MaxRelativeError(*interpreted, expected), tolerance) << program;
      auto jitted = codegen::testing::RunOnJit(*jit_, *func, inputs);
      EXPECT_TRUE(jitted.ok()) << jitted.status().message();
      if (jitted.ok()) EXPECT_LE(ir::MaxRelativeError(*jitted, expected), tolerance) << program;
      programs.push_back(program);
    }
    return programs;
  }

  std::unique_ptr<codegen::LlvmJit> jit_;
};

TEST_F(RowReductionTest, SoftmaxRowsAreReducedInVectorLanes) {
  SearchContext ctx = ContextFor(kModelSoftmax);
  for (const std::string& program : SampleAndCheck(ctx, "tile+reduction-lanes", 6)) {
    // Both row reductions have vector-wide partial results, reduced along the row in vectors (the
    // loop is copied where partitioning splits off the partial last step).
    EXPECT_EQ(Count(program, "allocate row_max_rf: float32\\[1, 1, (8|16|32)\\] local"), 1) << program;
    EXPECT_EQ(Count(program, "allocate row_sum_rf: float32\\[1, 1, (8|16|32)\\] local"), 1) << program;
    EXPECT_GE(Count(program, "for row_max_rf\\.lane_1 in \\[0, \\+8\\) vectorized"), 1) << program;
    EXPECT_GE(Count(program, "for row_sum_rf\\.lane_1 in \\[0, \\+8\\) vectorized"), 1) << program;
  }
}

TEST_F(RowReductionTest, FusedRowsComputeEachExponentialOnceInsideTheRowLoop) {
  SearchContext ctx = ContextFor(kModelSoftmax);
  for (const std::string& program : SampleAndCheck(ctx, "tile+reduction-lanes+fused-rows", 6)) {
    // One parallel loop, over the rows, holding a row's exponentials (a row, or a little more
    // where the row sum's last step reads past it under a guard), which the row sum and the
    // quotients both read rather than call exp again.
    EXPECT_EQ(Count(program, "parallel"), 1) << program;
    EXPECT_EQ(Count(program, "for out\\.i in \\[0, \\+6\\) parallel"), 1) << program;
    EXPECT_EQ(Count(program, "allocate exp: float32\\[1, (1[0-9][0-9])\\]"), 1) << program;
    EXPECT_GE(Count(program, "\n *exp\\[[^\n]*= exp\\(\\("), 1) << program;
    EXPECT_EQ(Count(program, "\n *(out|row_sum_rf)\\[[^\n]*exp\\(\\("), 0) << program;
  }
}

TEST_F(RowReductionTest, TheQuotientOfTwoRowReductionsIsNotTakenForAnEpilogue) {
  // The plain sketch once reverse-inlined the quotient into the row sum's tile, which the
  // quotient's read of the row maximum forbids: no candidate of it could be sampled.
  SearchContext ctx = ContextFor(kModelSoftmax);
  EXPECT_EQ(SampleAndCheck(ctx, "tile", 3).size(), 3u);
}

TEST_F(RowReductionTest, OnlyReductionsAlongAContiguousRowQualify) {
  auto qualifies = [](const std::string& spec, const std::string& block) {
    SearchContext ctx = ContextFor(spec);
    schedule::Schedule sch(ctx.workload, 0);
    return VectorizesAlongReduction(sch, sch.StageOf(*sch.GetBlock(block)), ctx.vector_lanes);
  };
  EXPECT_TRUE(qualifies(kModelSoftmax, "row_max"));
  // A matrix-vector product along the matrix's rows, and one along its columns.
  EXPECT_TRUE(qualifies("tdl: input w: float32[32, 64]; input x: float32[64]; "
                        "y[j: 32]: float32 = sum[k: 64](w[j, k] * x[k])", "y"));
  EXPECT_FALSE(qualifies("tdl: input w: float32[64, 32]; input x: float32[64]; "
                         "y[j: 32]: float32 = sum[k: 64](w[k, j] * x[k])", "y"));
  EXPECT_FALSE(qualifies("matmul(M=16,N=16,K=64)", "C"));
  // A row shorter than two vectors keeps its scalar reduction.
  EXPECT_FALSE(qualifies("tdl: input a: float32[4, 12]; s[i: 4]: float32 = sum[k: 12](a[i, k])", "s"));
  EXPECT_EQ(FindSketch(GenerateSketches(ContextFor("matmul(M=16,N=16,K=64)")), "tile+reduction-lanes"), nullptr);
}

}  // namespace
}  // namespace tuned::search

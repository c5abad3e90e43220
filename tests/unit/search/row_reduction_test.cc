// The reduction-lanes sketches: a reduction along a contiguous row (softmax's maximum and sum, a
// mean over the last axis, a matrix-vector product along the matrix's rows) is vectorized along
// its reduction axis through rfactor, and with fused rows computed inside the output's row loop.
// Each candidate is checked through the interpreter and the JIT against the reference.

#include <regex>
#include <set>

#include "server/search/vector_axis.h"
#include "tests/support/text_count.h"
#include "tests/unit/search/sketch_test_fixture.h"

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

using tuned::testing::CountMatches;

using RowReductionTest = SketchTest;

TEST_F(RowReductionTest, SoftmaxRowsAreReducedInVectorLanes) {
  SearchContext ctx = ContextFor(kModelSoftmax);
  for (const std::string& program : SampleAndCheck(ctx, "tile+reduction-lanes", 6)) {
    // Both row reductions have vector-wide partial results for one or more rows, reduced along
    // the row in vectors (the loop is copied where partitioning splits off the partial last step).
    EXPECT_EQ(CountMatches(program, "allocate row_max_rf: float32\\[[1-6], 1, (8|16|32)\\] local"), 1) << program;
    EXPECT_EQ(CountMatches(program, "allocate row_sum_rf: float32\\[[1-6], 1, (8|16|32)\\] local"), 1) << program;
    EXPECT_GE(CountMatches(program, "for row_max_rf\\.lane_1 in \\[0, \\+8\\) vectorized"), 1) << program;
    EXPECT_GE(CountMatches(program, "for row_sum_rf\\.lane_1 in \\[0, \\+8\\) vectorized"), 1) << program;
  }
}

TEST_F(RowReductionTest, SeveralRowsAreReducedTogetherInEachStep) {
  // A mean over rows, as the model importer writes it: 64 rows of 64.
  SearchContext ctx = ContextFor("tdl: input a: float32[64, 64]; s[i: 64, j: 1]: float32 = sum[k: 64](a[i, k]); "
                                 "out[i: 64, j: 1]: float32 = s[i, j] / 64.0");
  const std::regex rows_in_step("for s_rf\\.step in \\[0, \\+[0-9]+\\):\n *for s_rf\\.i in \\[0, \\+([0-9]+)\\) unrolled");
  std::set<int> rows_seen;
  for (const std::string& program : SampleAndCheck(ctx, "tile+reduction-lanes", 12)) {
    // Each step of the row reads a vector from each of the rows reduced together, into partial
    // results as many rows deep, and the mean of those rows follows in the same parallel loop.
    std::smatch m;
    ASSERT_TRUE(std::regex_search(program, m, rows_in_step)) << program;
    const int rows = std::stoi(m[1]);
    EXPECT_EQ(CountMatches(program, "allocate s_rf: float32\\[" + std::to_string(rows) + ", 1, (8|16|32)\\] local"), 1)
        << program;
    EXPECT_EQ(CountMatches(program, "parallel"), 1) << program;
    EXPECT_EQ(CountMatches(program, "for out\\.i in \\[0, \\+" + std::to_string(rows) + "\\)"), 1) << program;
    rows_seen.insert(rows);
  }
  EXPECT_GE(rows_seen.size(), 2u) << "the rows reduced together are a decision of the search";
  EXPECT_GT(*rows_seen.rbegin(), 1);
}

TEST_F(RowReductionTest, FusedRowsComputeEachExponentialOnceInsideTheRowLoop) {
  SearchContext ctx = ContextFor(kModelSoftmax);
  std::set<std::string> prefetches;
  for (const std::string& program : SampleAndCheck(ctx, "tile+reduction-lanes+fused-rows", 12)) {
    // The rows' inputs prefetched none, one or two rows ahead: a decision of the search.
    std::smatch ahead;
    std::regex_search(program, ahead, std::regex("for out\\.i in \\[0, \\+6\\) parallel( prefetch_ahead=[12])?:"));
    prefetches.insert(ahead.empty() ? "missing" : ahead[1].str());
    // One parallel loop, over the rows, holding a row's exponentials (a row, or a little more
    // where the row sum's last step reads past it under a guard), which the row sum and the
    // quotients both read rather than call exp again.
    EXPECT_EQ(CountMatches(program, "parallel"), 1) << program;
    EXPECT_EQ(CountMatches(program, "for out\\.i in \\[0, \\+6\\) parallel"), 1) << program;
    EXPECT_EQ(CountMatches(program, "allocate exp: float32\\[1, (1[0-9][0-9])\\]"), 1) << program;
    EXPECT_GE(CountMatches(program, "\n *exp\\[[^\n]*= exp\\(\\("), 1) << program;
    EXPECT_EQ(CountMatches(program, "\n *(out|row_sum_rf)\\[[^\n]*exp\\(\\("), 0) << program;
  }
  EXPECT_EQ(prefetches, (std::set<std::string>{"", " prefetch_ahead=1", " prefetch_ahead=2"}));
}

TEST_F(RowReductionTest, FusedRowsStepOverSeveralRowsInsideEachVectorOfTheRow) {
  // Layer norm with a scale and a bias, as the model importer writes it: each vector of the
  // scale and the bias serves every row of a step.
  SearchContext ctx = ContextFor(
      "tdl: input x: float32[6, 100]; input scale: float32[100]; input bias: float32[100]; "
      "mean_sum[i: 6, j: 1]: float32 = sum[ri: 100](x[i, ri]); "
      "centered[i: 6, j: 100]: float32 = x[i, j] - mean_sum[i, 0] / 100.0; "
      "square_sum[i: 6, j: 1]: float32 = sum[ri: 100](centered[i, ri] * centered[i, ri]); "
      "out[i: 6, j: 100]: float32 = centered[i, j] / sqrt(square_sum[i, 0] / 100.0 + 0.00001) * scale[j] + bias[j]");
  const std::regex step("for out\\.i_0 in \\[0, \\+([0-9]+)\\) parallel");
  const std::regex rows_inside_vectors(
      "for out\\.j_0 in \\[0, \\+[0-9]+\\):\n *for out\\.i_1 in \\[0, \\+([0-9]+)\\) unrolled:\n"
      " *for out\\.j_1 in \\[0, \\+[0-9]+\\) vectorized");
  std::set<int> rows_seen;
  for (const std::string& program : SampleAndCheck(ctx, "tile+reduction-lanes+fused-rows+recompute", 16)) {
    std::smatch steps, inside;
    ASSERT_TRUE(std::regex_search(program, steps, step)) << program;
    // A step of one row has no loop over its rows (lowering drops a loop of one iteration).
    const int rows = std::regex_search(program, inside, rows_inside_vectors) ? std::stoi(inside[1]) : 1;
    EXPECT_EQ(CountMatches(program, "out\\.i_1") > 0, rows > 1) << program;
    EXPECT_EQ(std::stoi(steps[1]) * rows, 6) << program;
    // Both moments of every row of the step are computed inside it, before its output.
    EXPECT_EQ(CountMatches(program, "allocate (mean|square)_sum: float32\\[" + std::to_string(rows) + ", 1\\]"), 2)
        << program;
    rows_seen.insert(rows);
  }
  EXPECT_GE(rows_seen.size(), 2u) << "the rows of a step are a decision of the search";
  EXPECT_GT(*rows_seen.rbegin(), 1);
}

TEST_F(RowReductionTest, FusedRowsMayRecomputeWhatSeveralPassesReadInsteadOfKeepingIt) {
  // Layer norm as the model importer writes it: the centred values feed the sum of squares and
  // the output.
  SearchContext ctx = ContextFor(
      "tdl: input x: float32[6, 100]; "
      "mean_sum[i: 6, j: 1]: float32 = sum[ri: 100](x[i, ri]); "
      "centered[i: 6, j: 100]: float32 = x[i, j] - mean_sum[i, 0] / 100.0; "
      "square_sum[i: 6, j: 1]: float32 = sum[ri: 100](centered[i, ri] * centered[i, ri]); "
      "out[i: 6, j: 100]: float32 = centered[i, j] / sqrt(square_sum[i, 0] / 100.0 + 0.00001)");
  for (const std::string& program : SampleAndCheck(ctx, "tile+reduction-lanes+fused-rows+recompute", 8)) {
    // One parallel loop over the rows, no row buffer of centred values: the sum of squares and
    // the output each subtract the mean from the input row themselves.
    EXPECT_EQ(CountMatches(program, "parallel"), 1) << program;
    EXPECT_EQ(CountMatches(program, "for out\\.i in \\[0, \\+6\\) parallel"), 1) << program;
    EXPECT_EQ(CountMatches(program, "allocate centered"), 0) << program;
    EXPECT_GE(CountMatches(program, "\n *square_sum_rf\\[[^\n]*x\\[[^\n]*- \\(mean_sum"), 1) << program;
    EXPECT_GE(CountMatches(program, "\n *out\\[[^\n]*x\\[[^\n]*- \\(mean_sum"), 1) << program;
  }
  // The sketch keeping them has the row buffer.
  for (const std::string& program : SampleAndCheck(ctx, "tile+reduction-lanes+fused-rows", 2)) {
    EXPECT_EQ(CountMatches(program, "allocate centered"), 1) << program;
  }
  // Nothing that several passes read (softmax's exponentials are; a mean's quotient is not):
  // no such sketch.
  EXPECT_NE(FindSketch(GenerateSketches(ContextFor(kModelSoftmax)), "tile+reduction-lanes+fused-rows+recompute"),
            nullptr);
  EXPECT_EQ(FindSketch(GenerateSketches(ContextFor("tdl: input a: float32[64, 64]; s[i: 64, j: 1]: float32 = "
                                                   "sum[k: 64](a[i, k]); out[i: 64, j: 64]: float32 = "
                                                   "a[i, j] - s[i, 0]")),
                       "tile+reduction-lanes+fused-rows+recompute"),
            nullptr);
}

TEST_F(RowReductionTest, AReductionWithFewerOutputsThanCoresIsReducedInChunksOnEveryCore) {
  // A sum of a whole vector and of a whole matrix (as the model importer writes ReduceSum over
  // every axis), and their mean: one output, two cores, so two chunks. The second argument is
  // the first reduction axis's steps in a chunk.
  const std::vector<std::pair<std::string, int>> cases = {
      {"tdl: input a: float32[1, 8191]; s[i: 1, j: 1]: float32 = sum[k: 8191](a[i, k])", 4096},
      {"tdl: input a: float32[16, 1024]; s[i: 1, j: 1]: float32 = sum[r: 16, k: 1024](a[r, k])", 8},
      {"tdl: input a: float32[1, 8192]; s[i: 1, j: 1]: float32 = sum[k: 8192](a[i, k]); "
       "out[i: 1, j: 1]: float32 = s[i, j] / 8192.0", 4096}};
  for (const auto& [spec, steps] : cases) {
    SearchContext ctx = ContextFor(spec);
    for (const std::string& program : SampleAndCheck(ctx, "tile+reduction-lanes+chunks", 4)) {
      // Each chunk's partial sum is a global result of the parallel loop over the two chunks,
      // reduced in vector lanes (a local partial result of its own), one chunk at a time; the
      // block then adds up the chunks.
      EXPECT_EQ(CountMatches(program, "allocate s_rf: float32\\[1, 1, 2\\] global"), 1) << program;
      EXPECT_EQ(CountMatches(program, "for s_rf\\.i_j_chunk_fused in \\[0, \\+2\\) parallel"), 1) << program;
      EXPECT_EQ(CountMatches(program, "parallel"), 1) << program;
      EXPECT_GE(CountMatches(program, "allocate s_rf_rf: float32\\[1, 1, 1, (8|16|32)\\] local"), 1) << program;
      EXPECT_EQ(CountMatches(program, "for s\\.chunk in \\[0, \\+2\\)"), 1) << program;
      // A chunk is a run of the first reduction axis, read at chunk * steps + step (where a
      // partial last chunk partitions the parallel loop, the second piece reads at steps + step).
      EXPECT_GE(CountMatches(program, "s_rf\\.i_j_chunk_fused \\* " + std::to_string(steps) + "\\)") +
                    CountMatches(program, " \\+ " + std::to_string(steps) + "\\)\\]"),
                1)
          << program;
    }
  }
  // Outputs enough for every core already, or a row too short to be worth splitting: no chunks.
  for (const char* spec : {"tdl: input a: float32[2, 8192]; s[i: 2, j: 1]: float32 = sum[k: 8192](a[i, k])",
                           "tdl: input a: float32[1, 1000]; s[i: 1, j: 1]: float32 = sum[k: 1000](a[i, k])"}) {
    EXPECT_EQ(FindSketch(GenerateSketches(ContextFor(spec)), "tile+reduction-lanes+chunks"), nullptr) << spec;
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

// The column-chunks sketch: a reduction across rows whose output row fits in a few vectors (a sum
// over a batch of rows, a bias's gradient, a vector times a matrix) is split into a contiguous
// chunk of rows per core. Each candidate is checked through the interpreter and the JIT against
// the reference.

#include "server/search/vector_axis.h"
#include "tests/support/text_count.h"
#include "tests/unit/search/sketch_test_fixture.h"

namespace tuned::search {
namespace {

using tuned::testing::CountMatches;

using ColumnReductionTest = SketchTest;

constexpr const char* kSketch = "tile+column-chunks";

TEST_F(ColumnReductionTest, EachCoreStreamsAChunkOfWholeRowsIntoVectorAccumulators) {
  // The second argument is the rows of a chunk: 1001 rows leave the second chunk one short (the
  // parallel loop is partitioned, each piece with its own accumulators).
  const std::vector<std::pair<std::string, int>> cases = {
      {"tdl: input a: float32[1001, 24]; s[j: 24]: float32 = sum[r: 1001](a[r, j])", 501},
      // A mean over the rows: the division follows the chunks' sum.
      {"tdl: input a: float32[512, 32]; s[j: 32]: float32 = sum[r: 512](a[r, j]); "
       "out[j: 32]: float32 = s[j] / 512.0", 256},
      // A batch of column sums, and a vector times a matrix: the rows are what the sum crosses.
      {"tdl: input a: float32[4, 256, 8]; s[b: 4, j: 8]: float32 = sum[r: 256](a[b, r, j])", 128},
      {"tdl: input w: float32[4096, 16]; input x: float32[4096]; s[j: 16]: float32 = sum[k: 4096](w[k, j] * x[k])",
       2048}};
  for (const auto& [spec, rows] : cases) {
    SearchContext ctx = ContextFor(spec);
    for (const std::string& program : SampleAndCheck(ctx, kSketch, 2)) {
      // One parallel loop, over the two chunks; each chunk's sums are a global result of it,
      // accumulated in a local row of the outputs while the chunk's rows stream past, and the
      // block adds the two chunks up after the loop.
      EXPECT_EQ(CountMatches(program, "parallel"), 1) << program;
      EXPECT_EQ(CountMatches(program, "for s_rf\\.chunk in \\[0, \\+2\\) parallel"), 1) << program;
      EXPECT_EQ(CountMatches(program, "allocate s_rf: float32\\[[0-9, ]+, 2\\] global"), 1) << program;
      EXPECT_GE(CountMatches(program, "allocate s_rf_local: float32\\[[0-9, ]+\\] local"), 1) << program;
      EXPECT_EQ(CountMatches(program, "for s\\.chunk in \\[0, \\+2\\)"), 1) << program;
      // A mean divides each output right after its chunks are added up.
      EXPECT_EQ(CountMatches(program, "for s\\.chunk in \\[0, \\+2\\):\n.*\n *out\\[s\\.i\\] = \\(s\\[0\\] / 512"),
                spec.find("out[") == std::string::npos ? 0 : 1)
          << program;
      // The rows of a chunk outside the output row's vectors (unrolled where the row holds more
      // than one): each row is read once, in order.
      EXPECT_EQ(CountMatches(program, "for s_rf\\.step in \\[0, \\+" + std::to_string(rows) +
                                          "\\):(\n *for s_rf\\.[a-z]+_0 in \\[0, \\+[0-9]+\\) unrolled:)?"
                                          "\n *for s_rf\\.[a-z]+_1 in \\[0, \\+8\\) vectorized"),
                1)
          << program;
    }
  }
}

TEST_F(ColumnReductionTest, AReductionThatDoesNotQualifyBesideOneThatDoesIsTiledAsUsual) {
  // The column sums are reduced in chunks; their total, a sum along its row, is tiled as in the
  // plain sketch.
  SearchContext ctx = ContextFor(
      "tdl: input a: float32[4096, 16]; s[j: 16]: float32 = sum[r: 4096](a[r, j]); "
      "t[i: 1]: float32 = sum[k: 16](s[k])");
  for (const std::string& program : SampleAndCheck(ctx, kSketch, 2)) {
    EXPECT_EQ(CountMatches(program, "for s_rf\\.chunk in \\[0, \\+2\\) parallel"), 1) << program;
    EXPECT_EQ(CountMatches(program, "t_rf"), 0) << program;
    EXPECT_GE(CountMatches(program, "t\\[[^]]*\\] = "), 1) << program;
  }
}

TEST_F(ColumnReductionTest, OnlyShortOutputRowsOverEnoughRowsAreReducedInChunks) {
  for (const char* spec : {
           // An output row of more than four vectors: the cores share the outputs.
           "tdl: input a: float32[1024, 40]; s[j: 40]: float32 = sum[r: 1024](a[r, j])",
           // Too few rows for a chunk per core worth its start.
           "tdl: input a: float32[100, 16]; s[j: 16]: float32 = sum[r: 100](a[r, j])",
           // A sum along the row (the row-chunks sketch's), and a GEMM.
           "tdl: input a: float32[1, 8192]; s[i: 1, j: 1]: float32 = sum[k: 8192](a[i, k])",
           "matmul(M=64,N=64,K=1024)"}) {
    EXPECT_EQ(FindSketch(GenerateSketches(ContextFor(spec)), kSketch), nullptr) << spec;
  }
}

TEST_F(ColumnReductionTest, ARowIsCrossedWhereAnInputRunsAlongTheOutputAndStridesAlongTheSum) {
  auto crosses = [](const std::string& spec, const std::string& block) {
    SearchContext ctx = ContextFor(spec);
    schedule::Schedule sch(ctx.workload, 0);
    return ReducesAcrossRows(sch, sch.StageOf(*sch.GetBlock(block)));
  };
  EXPECT_TRUE(crosses("tdl: input a: float32[64, 16]; s[j: 16]: float32 = sum[r: 64](a[r, j])", "s"));
  EXPECT_TRUE(crosses("matmul(M=16,N=16,K=64)", "C"));
  // Along the row, and a broadcast of the row: nothing streams across rows.
  EXPECT_FALSE(crosses("tdl: input a: float32[16, 64]; s[i: 16]: float32 = sum[k: 64](a[i, k])", "s"));
  EXPECT_FALSE(crosses("tdl: input a: float32[16]; s[j: 16]: float32 = sum[r: 64](a[j])", "s"));
}

}  // namespace
}  // namespace tuned::search

// The other-vector-axis sketch: where the last spatial axis is a poor vector (strided reads, no
// whole vectors), a reduction vectorizes along another axis, its inputs staged into panels with
// that axis innermost and its accumulator laid out likewise (compiler/lower/buffer_layout.cc).
// Each candidate is checked through the interpreter and the JIT against the reference.

#include <regex>
#include <sstream>

#include "compiler/ir/op_library.h"
#include "tests/unit/search/sketch_test_fixture.h"

namespace tuned::search {
namespace {

constexpr int kLanes = kTestLanes;

// The extents of `buffer`'s allocation in a printed program ("allocate NAME: float32[a, b]").
std::vector<int64_t> AllocatedShape(const std::string& program, const std::string& buffer) {
  std::smatch match;
  if (!std::regex_search(program, match, std::regex("allocate " + buffer + R"(: \w+\[([0-9, ]+)\])"))) return {};
  std::vector<int64_t> shape;
  std::stringstream dims(match[1].str());
  for (std::string dim; std::getline(dims, dim, ',');) shape.push_back(std::stoll(dim));
  return shape;
}

class OtherVectorAxisTest : public SketchTest {
 protected:
  std::vector<std::string> SampleAndCheck(const SearchContext& ctx, int seeds) {
    return SketchTest::SampleAndCheck(ctx, "tile+other-vector-axis", seeds);
  }
};

TEST_F(OtherVectorAxisTest, StridedConvolutionVectorizesChannelsFromAChannelInnermostWeightPanel) {
  // Stride 2 reads the image with a stride along the output row: the channels are the vector.
  SearchContext ctx = ContextFor("conv2d_nchw(N=1,C=3,H=15,W=15,F=16,R=3,S=3,stride=2,pad=1)");
  for (const std::string& program : SampleAndCheck(ctx, 8)) {
    // KCRS staged as CRSK: the panel's last extent is the channel tile, whole vectors of it.
    std::vector<int64_t> panel = AllocatedShape(program, "weight_global");
    ASSERT_EQ(panel.size(), 4u) << program;
    EXPECT_EQ(panel[3] % kLanes, 0) << program;
    EXPECT_EQ((std::vector<int64_t>{panel[0], panel[1], panel[2]}), (std::vector<int64_t>{3, 3, 3})) << program;
    // The accumulator keeps its channels innermost too.
    std::vector<int64_t> acc = AllocatedShape(program, "conv_local");
    ASSERT_EQ(acc.size(), 4u) << program;
    EXPECT_EQ(acc[3] % kLanes, 0) << program;
  }
}

// A stride-2 convolution as a model writes it: its weight a constant or not.
std::string StridedConvolution(bool constant_weight) {
  return std::string("tdl: input data: float32[1, 4, 9, 9]; input weight: ") + (constant_weight ? "const " : "") +
         "float32[32, 4, 3, 3]; pad[i: 1, j: 4, k: 11, l: 11]: float32 = select((((k >= 1) && (k < 10)) && "
         "(l >= 1)) && (l < 10), data[i, j, k - 1, l - 1], 0.0); conv[i: 1, j: 32, k: 5, l: 5]: float32 = "
         "sum[ri: 4, rj: 3, rk: 3](pad[i, ri, (2 * k) + rj, (2 * l) + rk] * weight[j, ri, rj, rk])";
}

TEST_F(OtherVectorAxisTest, AConstantWeightIsLaidOutOnceByThePrepackEntry) {
  // A constant weight's panel is the whole weight, staged at the root: lowering puts it in the
  // prepack entry, and the kernel reads it as an argument between the inputs and the output.
  SearchContext ctx = ContextFor(StridedConvolution(true));
  std::vector<Sketch> sketches = GenerateSketches(ctx);
  const Sketch* sketch = FindSketch(sketches, "tile+other-vector-axis");
  ASSERT_NE(sketch, nullptr);
  int blocked = 0;
  for (uint64_t seed = 0; seed < 4; ++seed) {
    auto sch = SampleSketch(ctx, *sketch, seed);
    ASSERT_TRUE(sch.ok()) << sch.status().message();
    auto func = lower::Lower(*sch);
    ASSERT_TRUE(func.ok()) << func.status().message();
    ASSERT_TRUE(func->prepack.defined()) << ir::ToString(func->body);
    ASSERT_EQ(func->num_packed, 1u);
    ASSERT_EQ(func->args.size(), 4u);
    EXPECT_EQ(func->args[0]->name, "data");
    EXPECT_EQ(func->args[1]->name, "weight");
    EXPECT_EQ(func->args[2]->name, "weight_global");
    EXPECT_EQ(func->output()->name, "conv");
    // CRSK, channels innermost, in blocks of the channels one register tile reads: [32/T]
    // blocks of CRS(T) (or one block of all 32); built in the prepack, read (not built) by the
    // kernel.
    const std::vector<int64_t>& shape = func->args[2]->shape;
    if (shape.size() == 4) {
      EXPECT_EQ(shape, (std::vector<int64_t>{4, 3, 3, 32}));
    } else {
      ASSERT_EQ(shape.size(), 5u);
      EXPECT_EQ(std::vector<int64_t>(shape.begin() + 1, shape.end() - 1), (std::vector<int64_t>{4, 3, 3}));
      EXPECT_GE(shape.front() * shape.back(), 32);
      EXPECT_LT((shape.front() - 1) * shape.back(), 32);
      ++blocked;
    }
    const std::string body = ir::ToString(func->body), prepack = ir::ToString(func->prepack);
    EXPECT_NE(body.find("weight_global["), std::string::npos) << body;
    EXPECT_EQ(body.find("allocate weight_global"), std::string::npos) << body;
    EXPECT_EQ(body.find("weight["), std::string::npos) << "the kernel still reads the weight\n" << body;
    EXPECT_NE(prepack.find("weight_global["), std::string::npos) << prepack;
  }
  EXPECT_GT(blocked, 0) << "no sample laid the weight out in blocks";
  // Interpreter and JIT, prepack then kernel, against the reference.
  EXPECT_EQ(SketchTest::SampleAndCheck(ctx, "tile+other-vector-axis", 4).size(), 4u);

  // A weight that may change between calls is staged in every call, per outer tile.
  SearchContext plain = ContextFor(StridedConvolution(false));
  std::vector<Sketch> plain_sketches = GenerateSketches(plain);
  auto sch = SampleSketch(plain, *FindSketch(plain_sketches, "tile+other-vector-axis"), 0);
  ASSERT_TRUE(sch.ok()) << sch.status().message();
  auto func = lower::Lower(*sch);
  ASSERT_TRUE(func.ok()) << func.status().message();
  EXPECT_FALSE(func->prepack.defined());
  EXPECT_EQ(func->num_packed, 0u);
  EXPECT_NE(ir::ToString(func->body).find("allocate weight_global"), std::string::npos) << ir::ToString(func->body);
}

TEST_F(OtherVectorAxisTest, AWeightPanelIsPackedOneVectorColumnAtATime) {
  // The weight is read across its rows (a stride of C*R*S along the channels): the copy walks a
  // column of one vector of channels through every (c, r, s) before the next column, so the
  // rows each gather touches are still in cache for the next gathers.
  SearchContext ctx = ContextFor("conv2d_nchw(N=1,C=4,H=9,W=9,F=32,R=3,S=3,stride=2,pad=1)");
  int columns = 0;
  for (const std::string& program : SampleAndCheck(ctx, 8)) {
    std::smatch copy;
    ASSERT_TRUE(std::regex_search(program, copy, std::regex(R"(allocate weight_global: [^\n]*\n\s*for (\S+) in \[0, \+(\d+)\))")))
        << program;
    std::vector<int64_t> panel = AllocatedShape(program, "weight_global");
    ASSERT_EQ(panel.size(), 4u) << program;
    const std::string vector_loop = "for weight_global.i_1 in [0, +" + std::to_string(kLanes) + ") vectorized";
    EXPECT_NE(program.find(vector_loop), std::string::npos) << program;
    if (panel[3] > kLanes) {
      ++columns;
      EXPECT_EQ(copy[1].str(), "weight_global.i_0") << program;
      EXPECT_EQ(std::stoll(copy[2].str()), panel[3] / kLanes) << program;
    }
  }
  EXPECT_GT(columns, 0) << "no sample staged more than one vector of channels";
}

TEST_F(OtherVectorAxisTest, OtherOpsWithAPoorLastAxisComputeTheReference) {
  // A prime GEMM vectorizes along its rows from a transposed panel of A; a strided depthwise
  // convolution along its channels from a channel-innermost panel of the image.
  for (const char* spec : {"matmul(M=16,N=13,K=7)", "depthwise_conv2d(N=1,C=16,H=9,W=9,stride=2,pad=1)"}) {
    SCOPED_TRACE(spec);
    EXPECT_EQ(SampleAndCheck(ContextFor(spec), 6).size(), 6u);
  }
}

TEST(OtherVectorAxis, OnlyWhereTheLastAxisIsAPoorVector) {
  // Contiguous whole vectors along the output row: the usual sketches only.
  for (const char* spec : {"matmul(M=16,N=64,K=8)", "conv2d_nchw(N=1,C=3,H=16,W=16,F=16,R=3,S=3,stride=1,pad=1)"}) {
    std::vector<Sketch> sketches = GenerateSketches(ContextFor(spec));
    EXPECT_EQ(FindSketch(sketches, "tile+other-vector-axis"), nullptr) << spec;
  }
  // No other axis has whole vectors (F = 12).
  std::vector<Sketch> sketches =
      GenerateSketches(ContextFor("conv2d_nchw(N=1,C=3,H=15,W=15,F=12,R=3,S=3,stride=2,pad=1)"));
  EXPECT_EQ(FindSketch(sketches, "tile+other-vector-axis"), nullptr);
}

}  // namespace
}  // namespace tuned::search

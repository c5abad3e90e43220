#include "compiler/ir/tdl/definition.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "compiler/ir/op_library.h"

namespace tuned::ir {
namespace {

Workload Parse(const std::string& text, DefinitionOptions options = {}) {
  StatusOr<Workload> w = ParseDefinition(text, options);
  EXPECT_TRUE(w.ok()) << w.status().message() << "\n" << text;
  if (!w.ok()) std::abort();
  return std::move(w).value();
}

std::string ReadExample(const std::string& name) {
  std::ifstream in(std::string(TUNED_SOURCE_DIR) + "/examples/tdl/" + name);
  EXPECT_TRUE(in.good()) << name;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const char* const kExamples[] = {"gelu_matmul.tdl", "layer_norm.tdl", "conv2d_residual_relu.tdl",
                                 "attention_scores.tdl", "matmul_transposed.tdl"};

constexpr const char* kMatmul = R"(
param M = 4, N = 5, K = 3
input A: float32[M, K]
input B: float32[K, N]
C[i: M, j: N] = sum[k: K](A[i, k] * B[k, j])
)";

TEST(Definition, KeysArePinned) {
  // Keys are what databases store: changing these texts or hashes loses users' logs.
  Workload w = Parse(kMatmul);
  EXPECT_EQ(w.key(), "tdl: input A: float32[4, 3]; input B: float32[3, 5]; "
                     "C[i: 4, j: 5]: float32 = sum[ri: 3](A[i, ri] * B[ri, j])");
  EXPECT_EQ(w.key_sha256(), "8d3d4a9bd8e8ed9105d480258f7f019947faea0b0f7bc59575980b8a616e19cf");
  EXPECT_EQ(w.op(), "tdl");
  Workload relu = Parse("input X: float64[8]\nY[i: 8] = max(X[i], 0) * 2 - -1.5");
  EXPECT_EQ(relu.key(), "tdl: input X: float64[8]; Y[i: 8]: float64 = "
                        "(max(X[i], 0.0f64) * 2.0f64) - -1.5f64");
  Workload guarded = Parse("param H = 4\ninput x: int8[H]\n"
                           "y[h: H + 2] = select(h >= 1 && h <= H, int32(x[h - 1]), 0)");
  EXPECT_EQ(guarded.key(), "tdl: input x: int8[4]; y[i: 6]: int32 = "
                           "select((i >= 1) && (i <= 4), int32(x[i - 1]), 0i32)");
}

TEST(Definition, AConstantInputIsMarkedInTheKeyAndParsesBack) {
  // A model's weight: the same computation under a key of its own, since a kernel may pack
  // the constant once (lower::LoweredFunc::prepack) and time only what follows.
  Workload w = Parse("input A: float32[4, 3]\ninput B: const float32[3, 5]\n"
                     "C[i: 4, j: 5] = sum[k: 3](A[i, k] * B[k, j])");
  EXPECT_EQ(w.key(), "tdl: input A: float32[4, 3]; input B: const float32[3, 5]; "
                     "C[i: 4, j: 5]: float32 = sum[ri: 3](A[i, ri] * B[ri, j])");
  EXPECT_FALSE(w.IsConstantInput(w.inputs()[0].get()));
  EXPECT_TRUE(w.IsConstantInput(w.inputs()[1].get()));
  EXPECT_NE(w.Definition().find("input B: const float32[3,5]"), std::string::npos) << w.Definition();
  auto again = ir::ParseWorkloadSpec(w.key());
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(again->key(), w.key());
  EXPECT_TRUE(again->IsConstantInput(again->inputs()[1].get()));
  EXPECT_NE(w.key(), Parse(kMatmul).key());
  // What logs written before constants were marked hold the same workload under.
  EXPECT_EQ(KeyWithoutConstants(w), "tdl: input A: float32[4, 3]; input B: float32[3, 5]; "
                                    "C[i: 4, j: 5]: float32 = sum[ri: 3](A[i, ri] * B[ri, j])");
  EXPECT_EQ(KeyWithoutConstants(Parse(kMatmul)), Parse(kMatmul).key());
}

TEST(Definition, KeyIgnoresWhitespaceAxisNamesAndParameterOrder) {
  Workload a = Parse(kMatmul);
  Workload b = Parse("param K=3,N=5,M=4;input A:float32[M,K] ;input B : float32[ K , N ]\n\n"
                     "# comment\nC[row: M, col: N]: float32 =\n  sum[red: K]((A[row, red]) * B[red, col])");
  Workload c = Parse("param N = 5\nparam M = 4\nparam K = 1\ninput A: float32[M, K * 3]\n"
                     "input B: float32[3, N]\nC[x: M, y: N] = sum[z: 3](A[x, z] * B[z, y])");
  EXPECT_EQ(a.key(), b.key());
  EXPECT_EQ(a.key(), c.key());
  EXPECT_EQ(a.key_sha256(), c.key_sha256());
}

TEST(Definition, ParametersBindFromOutside) {
  DefinitionOptions options;
  options.params = {{"N", "7"}, {"M", "2"}};
  Workload w = Parse(kMatmul, options);
  EXPECT_EQ(w.output_stage().output->shape, (std::vector<int64_t>{2, 7}));
  Workload unbound = Parse("param M\ninput A: float32[M]\nB[i: M] = A[i]", {"f", {{"M", "3"}}, {}});
  EXPECT_EQ(unbound.inputs()[0]->shape, (std::vector<int64_t>{3}));
}

TEST(Definition, LibraryOpsPrintAndParseBack) {
  for (const char* spec :
       {"matmul(M=2,N=3,K=4)", "matmul(M=2,N=3,K=4,dtype=int8)", "matmul(M=2,N=3,K=4,dtype=float16)",
        "batch_matmul(B=2,M=2,N=3,K=4,dtype=float64)", "dense(M=2,N=3,K=4,bias=1,relu=true)",
        "conv2d_nchw(C=2,H=5,W=5,F=3,stride=2,pad=1,dilation=2)", "conv2d_nhwc(C=2,H=5,W=5,F=3,pad=1)",
        "depthwise_conv2d(C=2,H=5,W=5,pad=1)", "reduce_rows(M=3,N=4,kind=min)",
        "reduce_rows(M=3,N=4,kind=max,dtype=int32)", "softmax(M=2,N=3)", "add(M=2,N=3)",
        "relu(M=2,N=3,dtype=int8)"}) {
    SCOPED_TRACE(spec);
    StatusOr<Workload> library = ParseWorkloadSpec(spec);
    ASSERT_TRUE(library.ok()) << library.status().message();
    Workload written = Parse(PrintDefinition(*library));
    EXPECT_EQ(written.Definition(), library->Definition());
    EXPECT_EQ(written.flops(), library->flops());
    EXPECT_EQ(library->key().find("tdl"), std::string::npos) << "library keys keep their form";
    // The key rebuilds the workload, through the one place keys become workloads.
    StatusOr<Workload> rebuilt = ParseWorkloadSpec(written.key());
    ASSERT_TRUE(rebuilt.ok()) << rebuilt.status().message();
    EXPECT_EQ(rebuilt->key(), written.key());
    EXPECT_EQ(rebuilt->Definition(), library->Definition());
  }
}

TEST(Definition, UserOperatorsRoundTrip) {
  for (const char* name : kExamples) {
    SCOPED_TRACE(name);
    Workload w = Parse(ReadExample(name), {name, {}, {}});
    EXPECT_GT(w.flops(), 0);
    Workload again = Parse(PrintDefinition(w));
    EXPECT_EQ(again.key(), w.key());
    EXPECT_EQ(again.Definition(), w.Definition());
    StatusOr<Workload> from_key = ParseWorkloadSpec(w.key());
    ASSERT_TRUE(from_key.ok()) << from_key.status().message();
    EXPECT_EQ(from_key->Definition(), w.Definition());
    EXPECT_EQ(from_key->key_sha256(), w.key_sha256());
  }
}

TEST(Definition, ParametersChangeShapesAndKeys) {
  Workload small = Parse(ReadExample("gelu_matmul.tdl"));
  Workload big = Parse(ReadExample("gelu_matmul.tdl"), {"g", {{"M", "128"}}, {}});
  EXPECT_NE(small.key(), big.key());
  EXPECT_EQ(big.output_stage().output->shape[0], 128);
  EXPECT_EQ(big.flops(), 2 * small.flops());
}

struct ErrorCase {
  const char* text;
  const char* message;
};

TEST(Definition, ErrorsAreOneLineWithPositionTokenAndExpectation) {
  SpecLimits small;
  small.max_buffer_bytes = 1024;
  const ErrorCase cases[] = {
      {"input A: float32[4]\nB[i: 4] = Q[i]",
       "op.tdl:2:11: unknown tensor 'Q'; expected one of the tensors defined before (A)"},
      {"input A: float32[4, 4]\nB[i: 4] = A[i, i, i]",
       "op.tdl:2:19: index out of the declared rank: 'A' has 2 dimensions; expected ']'"},
      {"input A: float32[4, 4]\nB[i: 4] = sum[k: 4](A[i, k]) * A[i, k]",
       "op.tdl:2:11: a reduction inside an expression"},
      {"input A: float32[4, 4]\nB[i: 4] = sum[k: 4](A[i, k] * A[k, 0]) \nC[i: 4] = B[k]",
       "op.tdl:3:13: unknown name 'k'"},
      {"input A: float32[4]\ninput B: int32[4]\nC[i: 4] = A[i] + B[i]",
       "op.tdl:3:11: dtype mismatch: operands of '+' are float32 and int32; expected one dtype"},
      {"input A: float32[4]\nC[i: 4]: int32 = A[i]",
       "op.tdl:2:10: dtype mismatch: stage 'C' is declared int32 but its body is float32"},
      {"param N = 4\ninput A: float32[N - 4]\nB[i: 4] = A[i]",
       "op.tdl:2:18: the dimension 0 of 'A' is 0, which makes the buffer empty; expected an extent "
       "of at least 1"},
      {"input A: float32[1024]\nB[i: 1024] = A[i]",
       "op.tdl:1:7: buffer 'A' needs 4096 bytes; expected at most 1024"},
      // Found by fuzz_workload_spec and fuzz_workload_language: sizes past int64_t.
      {"input A: float64[4, 8554405740923001969]\nB[i: 4] = A[i, 0]",
       "op.tdl:1:7: buffer 'A' needs 2.74e+20 bytes; expected at most 1024"},
      {"param M = 22332281355690 * 1169000\ninput A: float32[M]\nB[i: 4] = A[i]",
       "op.tdl:1:26: '*' overflows 64-bit integers in a shape; expected extents that fit"},
      {"param M = 9223372036854775807 + 1\ninput A: float32[M]\nB[i: 4] = A[i]",
       "op.tdl:1:31: '+' overflows 64-bit integers in a shape"},
      // Found by fuzz_workload_language: a literal that overflows is an infinity, which does
      // not print back.
      {"input X: float64[8]\nY[i: 8]: float64 = max(X[i], 6665e053333333333333333330f64)",
       "op.tdl:2:30: float '6665e053333333333333333330f64' is out of range for float64; expected "
       "at most 1.797e+308 in magnitude"},
      {"input X: float32[8]\nY[i: 8] = X[i] * 4e38",
       "op.tdl:2:18: float '4e38' is out of range for float32; expected at most 3.403e+38 in "
       "magnitude"},
      {"input A: float32[4]\nB[i: 4] = A[i] +", "op.tdl:2:17: unexpected 'end of statement'; expected an expression"},
      {"input A: flaot32[4]", "op.tdl:1:10: unknown dtype 'flaot32'; expected float32"},
  };
  for (const ErrorCase& c : cases) {
    SCOPED_TRACE(c.text);
    StatusOr<Workload> w = ParseDefinition(c.text, {"op.tdl", {}, small});
    ASSERT_FALSE(w.ok());
    EXPECT_EQ(w.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(w.status().message().find('\n'), std::string::npos) << w.status().message();
    EXPECT_EQ(w.status().message().rfind(c.message, 0), 0u) << w.status().message();
  }
}

TEST(Definition, ExpressionsDeeperThanTheLimitAreRefusedNotOverflowingTheStack) {
  // Found by fuzz_workload_language and fuzz_workload_spec: nesting that overflowed the stack
  // of the recursive parser. Parentheses, unary operators and chains are each bounded.
  std::string chain = "A[i]";
  for (int k = 0; k < 300; ++k) chain += " + A[i]";
  const std::pair<std::string, std::string> cases[] = {
      {std::string(300, '(') + "A[i]" + std::string(300, ')'), "op.tdl:2:267: expression nested deeper than 256 levels; expected a shallower one"},
      {std::string(300, '-') + "A[i]", "op.tdl:2:266: expression nested deeper than 256 levels"},
      {chain, "op.tdl:2:"},
  };
  for (const auto& [body, message] : cases) {
    StatusOr<Workload> w = ParseDefinition("input A: float32[4]\nB[i: 4] = " + body, {"op.tdl", {}, {}});
    ASSERT_FALSE(w.ok()) << body.substr(0, 40);
    EXPECT_EQ(w.status().message().rfind(message, 0), 0u) << w.status().message();
    EXPECT_NE(w.status().message().find("nested deeper than 256 levels"), std::string::npos)
        << w.status().message();
  }
  std::string shallow = "A[i]";
  for (int k = 0; k < 100; ++k) shallow += " + A[i]";
  EXPECT_TRUE(ParseDefinition("input A: float32[4]\nB[i: 4] = " + shallow, {"op.tdl", {}, {}}).ok());
}

TEST(Definition, ReductionAxisOutsideItsReductionIsNamed) {
  // The reduction is the whole body; its axis in the stage's own output extent is outside it.
  StatusOr<Workload> w = ParseDefinition("input A: float32[4, 4]\nB[i: 4] = sum[k: 4](A[i, k] * A[i, k])\n"
                                         "C[i: 4] = sum[k: 4](A[i, k]) ",
                                         {"op.tdl", {}, {}});
  ASSERT_TRUE(w.ok()) << w.status().message();
  StatusOr<Workload> bad = ParseDefinition("input A: float32[4]\nB[i: 4] = select(k > 0, 1.0, sum[k: 4](A[k]))",
                                           {"op.tdl", {}, {}});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message().rfind("op.tdl:2:18: reduction axis 'k' used outside its reduction", 0), 0u)
      << bad.status().message();
}

TEST(Definition, UnknownParameterFromOutsideIsRefused) {
  StatusOr<Workload> w = ParseDefinition(kMatmul, {"op.tdl", {{"Q", "3"}}, {}});
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().message(), "op.tdl: --param Q=3: no parameter 'Q'; expected one of M, N, K");
}

}  // namespace
}  // namespace tuned::ir

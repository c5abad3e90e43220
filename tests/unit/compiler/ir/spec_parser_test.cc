#include <gtest/gtest.h>

#include "compiler/ir/op_library.h"

namespace tuned::ir {
namespace {

std::string ErrorOf(const std::string& spec, const SpecLimits& limits = {}) {
  StatusOr<Workload> w = ParseWorkloadSpec(spec, limits);
  EXPECT_FALSE(w.ok()) << spec << " parsed";
  if (w.ok()) return "";
  EXPECT_EQ(w.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(w.status().message().find('\n'), std::string::npos) << "error must be one line";
  return w.status().message();
}

TEST(SpecParser, CanonicalKeyIgnoresOrderSpacesAndDefaults) {
  auto a = ParseWorkloadSpec("matmul(M=64,N=32,K=16,dtype=float32)");
  auto b = ParseWorkloadSpec("  matmul( K = 16 , N=32, M=64 ) ");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->key(), "matmul(M=64,N=32,K=16,dtype=float32)");
  EXPECT_EQ(a->key(), b->key());
  EXPECT_EQ(a->key_sha256(), b->key_sha256());
}

TEST(SpecParser, KeysAreStableAcrossVersions) {
  // These exact texts and hashes are what databases store; changing them loses users' logs.
  auto w = ParseWorkloadSpec("conv2d_nchw(C=3,H=32,W=32,F=8,pad=1)");
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->key(), "conv2d_nchw(N=1,C=3,H=32,W=32,F=8,R=3,S=3,stride=1,pad=1,dilation=1,dtype=float32)");
  auto m = ParseWorkloadSpec("matmul(M=4,N=5,K=3)");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->key_sha256(), "f9ea07596c0444022b115d41f9c532c95223d83b66e791cbc983f35a336ddb4f");
}

TEST(SpecParser, EveryLibraryOpBuildsWithSmallShapes) {
  for (const char* spec :
       {"matmul(M=2,N=3,K=4)", "batch_matmul(B=2,M=2,N=3,K=4)", "dense(M=2,N=3,K=4,bias=1,relu=true)",
        "conv2d_nchw(C=2,H=5,W=5,F=3,stride=2,pad=1,dilation=2)", "conv2d_nhwc(C=2,H=5,W=5,F=3)",
        "depthwise_conv2d(C=2,H=5,W=5,pad=1)", "reduce_rows(M=3,N=4,kind=min)", "softmax(M=2,N=3)",
        "add(M=2,N=2,dtype=int32)", "relu(M=2,N=2,dtype=float16)"}) {
    auto w = ParseWorkloadSpec(spec);
    EXPECT_TRUE(w.ok()) << spec << ": " << w.status().message();
  }
}

TEST(SpecParser, FlopsCountValueArithmeticOnly) {
  auto w = ParseWorkloadSpec("matmul(M=8,N=4,K=2)");
  ASSERT_TRUE(w.ok());
  EXPECT_DOUBLE_EQ(w->flops(), 2.0 * 8 * 4 * 2);
  auto conv = ParseWorkloadSpec("conv2d_nchw(C=2,H=5,W=5,F=3,pad=0)");
  ASSERT_TRUE(conv.ok());
  EXPECT_DOUBLE_EQ(conv->flops(), 2.0 * 3 * 3 * 3 * 2 * 3 * 3);
}

TEST(SpecParser, UnknownOpListsKnownOps) {
  std::string e = ErrorOf("matmull(M=1,N=1,K=1)");
  EXPECT_NE(e.find("unknown op 'matmull'"), std::string::npos) << e;
  EXPECT_NE(e.find("matmul"), std::string::npos) << e;
}

TEST(SpecParser, UnknownParameter) {
  std::string e = ErrorOf("matmul(M=1,N=1,K=1,Q=2)");
  EXPECT_NE(e.find("unknown parameter 'Q'"), std::string::npos) << e;
}

TEST(SpecParser, MissingParameter) {
  EXPECT_NE(ErrorOf("matmul(M=1,N=1)").find("missing parameter K"), std::string::npos);
}

TEST(SpecParser, DuplicateParameter) {
  EXPECT_NE(ErrorOf("matmul(M=1,N=1,K=1,M=2)").find("parameter M given twice"), std::string::npos);
}

TEST(SpecParser, BadValues) {
  EXPECT_NE(ErrorOf("matmul(M=x,N=1,K=1)").find("M='x' is not an integer"), std::string::npos);
  EXPECT_NE(ErrorOf("matmul(M=0,N=1,K=1)").find("must be at least 1"), std::string::npos);
  EXPECT_NE(ErrorOf("matmul(M=-3,N=1,K=1)").find("must be at least 1"), std::string::npos);
  EXPECT_NE(ErrorOf("matmul(M=99999999999999999999,N=1,K=1)").find("out of range"), std::string::npos);
  EXPECT_NE(ErrorOf("matmul(M=1,N=1,K=1,dtype=float8)").find("is not a dtype"), std::string::npos);
  EXPECT_NE(ErrorOf("dense(M=1,N=1,K=1,relu=maybe)").find("not a boolean"), std::string::npos);
  EXPECT_NE(ErrorOf("reduce_rows(M=1,N=1,kind=mean)").find("not one of sum, max, min"), std::string::npos);
}

TEST(SpecParser, MalformedSyntax) {
  EXPECT_NE(ErrorOf("matmul").find("not of the form op(name=value,...)"), std::string::npos);
  EXPECT_NE(ErrorOf("matmul(M=1,N=1,K=1").find("not of the form"), std::string::npos);
  EXPECT_NE(ErrorOf("matmul(M=1,N,K=1)").find("'N' is not of the form name=value"), std::string::npos);
  EXPECT_NE(ErrorOf("matmul(M=1,,K=1)").find("is not of the form name=value"), std::string::npos);
}

TEST(SpecParser, SizesOverTheLimitAreRefused) {
  std::string e = ErrorOf("matmul(M=1000000,N=1000000,K=4)");
  EXPECT_NE(e.find("over the limit"), std::string::npos) << e;
  SpecLimits tight;
  tight.max_buffer_bytes = 1024;
  EXPECT_NE(ErrorOf("matmul(M=32,N=32,K=4)", tight).find("buffer C needs 4096 bytes"), std::string::npos);
  // Beyond what an int64_t holds (found by fuzz_workload_spec): still the one-line refusal.
  e = ErrorOf("reduce_rows(M=2147483648,N=2147483648)");
  EXPECT_NE(e.find("buffer A needs 18446744073709551616 bytes, over the limit"), std::string::npos) << e;
}

// An integer parameter beyond 2^31 is refused before any shape arithmetic (found by
// fuzz_workload_spec: a dense layer of 6e18 rows overflowed counting its points).
TEST(SpecParser, IntegerParametersHaveAnUpperBound) {
  std::string e = ErrorOf("dense(M=6000000000000000000,N=5,K=9,bias=true)");
  EXPECT_NE(e.find("M='6000000000000000000' must be at most 2147483648"), std::string::npos) << e;
  e = ErrorOf("conv2d_nchw(C=1,H=8,W=8,F=1,R=3,S=3,pad=4611686018427387904)");
  EXPECT_NE(e.find("pad='4611686018427387904' must be at most 2147483648"), std::string::npos) << e;
  EXPECT_TRUE(ParseWorkloadSpec("reduce_rows(M=1,N=2147483648)", {int64_t(1) << 34}).ok());
}

TEST(SpecParser, ConvWithEmptyOutputIsRefused) {
  EXPECT_NE(ErrorOf("conv2d_nchw(C=1,H=2,W=2,F=1,R=3,S=3)").find("empty output"), std::string::npos);
}

}  // namespace
}  // namespace tuned::ir

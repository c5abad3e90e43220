// Every library op written out by hand in the definition language is the same workload and
// lowers to the same program, unscheduled and under the default schedule: the language adds no
// meaning of its own to a computation the library can already express.

#include <gtest/gtest.h>

#include "compiler/ir/ir_printer.h"
#include "compiler/ir/op_library.h"
#include "compiler/ir/tdl/definition.h"
#include "compiler/lower/pipeline.h"

namespace tuned::lower {
namespace {

struct HandWritten {
  const char* spec;
  const char* definition;
};

const HandWritten kOps[] = {
    {"matmul(M=8,N=6,K=4)", R"(
param M = 8, N = 6, K = 4
input A: float32[M, K]
input B: float32[K, N]
C[i: M, j: N] = sum[k: K](A[i, k] * B[k, j]))"},
    {"matmul(M=8,N=6,K=4,dtype=int8)", R"(
param M = 8, N = 6, K = 4
input A: int8[M, K]
input B: int8[K, N]
C[i: M, j: N] = sum[k: K](int32(A[i, k]) * int32(B[k, j])))"},
    {"batch_matmul(B=2,M=3,N=4,K=5,dtype=float64)", R"(
param BATCH = 2, M = 3, N = 4, K = 5
input A: float64[BATCH, M, K]
input B: float64[BATCH, K, N]
C[b: BATCH, m: M, n: N] = sum[k: K](A[b, m, k] * B[b, k, n]))"},
    {"dense(M=4,N=6,K=5,bias=true,relu=true)", R"(
param M = 4, N = 6, K = 5
input X: float32[M, K]
input W: float32[N, K]
input bias: float32[N]
dense[i: M, j: N] = sum[k: K](X[i, k] * W[j, k])
bias_add[i: M, j: N] = dense[i, j] + bias[j]
relu[i: M, j: N] = max(bias_add[i, j], 0.0))"},
    {"conv2d_nchw(C=2,H=7,W=6,F=3,stride=2,pad=1)", R"(
param N = 1, C = 2, H = 7, W = 6, F = 3, R = 3, S = 3, T = 2, P = 1, D = 1
input data: float32[N, C, H, W]
input weight: float32[F, C, R, S]
pad[n: N, c: C, h: H + 2 * P, w: W + 2 * P] =
    select(h - P >= 0 && h - P < H && w - P >= 0 && w - P < W, data[n, c, h - P, w - P], 0.0)
conv[n: N, f: F, y: (H + 2 * P - D * (R - 1) - 1) / T + 1, x: (W + 2 * P - D * (S - 1) - 1) / T + 1] =
    sum[c: C, r: R, s: S](pad[n, c, y * T + r * D, x * T + s * D] * weight[f, c, r, s]))"},
    {"conv2d_nhwc(C=2,H=5,W=5,F=3,pad=1)", R"(
param H = 5, W = 5
input data: float32[1, H, W, 2]
input weight: float32[3, 3, 2, 3]
pad[n: 1, h: H + 2, w: W + 2, c: 2] =
    select(h - 1 >= 0 && h - 1 < H && w - 1 >= 0 && w - 1 < W, data[n, h - 1, w - 1, c], 0.0)
conv[n: 1, y: H, x: W, f: 3] =
    sum[c: 2, r: 3, s: 3](pad[n, y * 1 + r * 1, x * 1 + s * 1, c] * weight[r, s, c, f]))"},
    {"depthwise_conv2d(C=2,H=5,W=5)", R"(
input data: float32[1, 2, 5, 5]
input weight: float32[2, 3, 3]
conv[n: 1, c: 2, y: 3, x: 3] = sum[r: 3, s: 3](data[n, c, y * 1 + r * 1, x * 1 + s * 1] * weight[c, r, s]))"},
    {"reduce_rows(M=3,N=4,kind=max,dtype=int32)", R"(
input A: int32[3, 4]
reduce[i: 3] = max[j: 4](A[i, j]))"},
    {"softmax(M=2,N=3)", R"(
param M = 2, N = 3
input A: float32[M, N]
row_max[i: M] = max[j: N](A[i, j])
exp[i: M, j: N] = exp(A[i, j] - row_max[i])
row_sum[i: M] = sum[j: N](exp[i, j])
softmax[i: M, j: N] = exp[i, j] / row_sum[i])"},
    {"add(M=2,N=3)", R"(
input A: float32[2, 3]
input B: float32[2, 3]
add[i: 2, j: 3] = A[i, j] + B[i, j])"},
    {"relu(M=2,N=3,dtype=int8)", R"(
input A: int8[2, 3]
relu[i: 2, j: 3] = max(A[i, j], 0))"},
};

std::string Program(const StatusOr<LoweredFunc>& func) {
  EXPECT_TRUE(func.ok()) << func.status().message();
  return func.ok() ? ir::ToString(func->body) : "";
}

TEST(HandWrittenLibraryOps, LowerToTheSameProgram) {
  for (const HandWritten& op : kOps) {
    SCOPED_TRACE(op.spec);
    StatusOr<ir::Workload> library = ir::ParseWorkloadSpec(op.spec);
    StatusOr<ir::Workload> written = ir::ParseDefinition(op.definition);
    ASSERT_TRUE(library.ok()) << library.status().message();
    ASSERT_TRUE(written.ok()) << written.status().message();
    EXPECT_EQ(written->Definition(), library->Definition());
    EXPECT_EQ(written->flops(), library->flops());
    EXPECT_NE(written->key(), library->key()) << "a definition has its own key form";
    auto lib = std::make_shared<const ir::Workload>(*library);
    auto own = std::make_shared<const ir::Workload>(*written);
    EXPECT_EQ(Program(LowerUnscheduled(own)), Program(LowerUnscheduled(lib)));
    EXPECT_EQ(Program(LowerDefaultSchedule(own)), Program(LowerDefaultSchedule(lib)));
  }
}

}  // namespace
}  // namespace tuned::lower

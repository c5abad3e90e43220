// Vector loads and stores of GPU kernels: the decision (PlanVectorLoop) on hand-built loops,
// aligned and not, and the tiled matmul with its shared-memory fills vectorized by 4, printed as
// float4 / vload4, race-free and matching the reference in the interpreter and on PoCL, compiled
// by NVRTC for sm_90; a fill whose runs are not a multiple of 4 stays scalar.

#include <gtest/gtest.h>

#include "compiler/analysis/access.h"

#include "compiler/codegen/gpu/gpu_source.h"
#include "compiler/codegen/gpu/vector_access.h"
#include "compiler/ir/evaluator.h"
#include "compiler/ir/op_library.h"
#include "compiler/lower/gpu/lower_gpu.h"
#include "compiler/lower/interpreter.h"
#include "tests/support/gpu_schedules.h"
#include "tests/unit/compiler/gpu/gpu_test_util.h"

namespace tuned {
namespace {

using codegen::gpu::Dialect;
using codegen::gpu::PlanVectorLoop;
using lower::gpu::GpuProgram;
using namespace ir;

bool AllAligned(const BufferNode*) { return true; }

void ExpectContains(const std::string& text, const std::string& needle, bool present = true) {
  EXPECT_EQ(text.find(needle) != std::string::npos, present) << needle << "\n" << text;
}

// for v in [0, extent) vectorized: S[4 * t + shift + v] = A[8 * t + v] * 2, t in [0, 15].
struct CopyLoop {
  Var t = MakeVar("t"), v = MakeVar("v");
  Expr te = AsExpr(t), ve = AsExpr(v);
  Buffer a = MakeBuffer("A", DataType::Float32(), {128});
  Buffer s = MakeBuffer("S", DataType::Float32(), {70}, MemoryScope::kShared);
  VarBounds bounds{{t.get(), {0, 15}}};

  Stmt Loop(int64_t shift, int64_t extent, ForKind kind = ForKind::kVectorized, DataType dtype = DataType::Float32()) {
    Buffer target = dtype == s->dtype ? s : MakeBuffer("S", dtype, {70}, MemoryScope::kShared);
    Expr value = MakeLoad(a, {MakeInt(8) * te + ve}) * MakeFloat(2.0);
    if (dtype != s->dtype) value = MakeCast(dtype, value);
    return MakeFor(v, MakeInt(0), MakeInt(extent), kind,
                   MakeStore(target, {MakeInt(4) * te + MakeInt(shift) + ve}, value));
  }
};

TEST(GpuVectorAccess, AlignedUnitStrideLoopsOfTwoOrFourAreVectors) {
  CopyLoop c;
  for (int64_t width : {2, 4}) {
    Stmt loop = c.Loop(0, width);
    auto plan = PlanVectorLoop(*loop.as<For>(), c.bounds, AllAligned);
    ASSERT_TRUE(plan.has_value()) << width;
    EXPECT_EQ(plan->width, width);
    ASSERT_EQ(plan->loads.size(), 1u);
    EXPECT_EQ(analysis::KnownDivisor(plan->loads[0].first_offset) % width, 0);
  }
}

TEST(GpuVectorAccess, MisalignedStridedOrOddLoopsStayScalar) {
  CopyLoop c;
  auto planned = [&](const Stmt& loop, const std::function<bool(const BufferNode*)>& aligned = AllAligned) {
    return PlanVectorLoop(*loop.as<For>(), c.bounds, aligned).has_value();
  };
  EXPECT_FALSE(planned(c.Loop(1, 4))) << "offset +1";
  EXPECT_FALSE(planned(c.Loop(2, 4))) << "offset +2 with width 4";
  EXPECT_TRUE(planned(c.Loop(2, 2))) << "offset +2 with width 2";
  EXPECT_FALSE(planned(c.Loop(0, 3))) << "extent 3";
  EXPECT_FALSE(planned(c.Loop(0, 8))) << "extent 8";
  EXPECT_FALSE(planned(c.Loop(0, 4, ForKind::kSerial))) << "not vectorized";
  EXPECT_FALSE(planned(c.Loop(0, 4, ForKind::kVectorized, DataType::Float64()))) << "float64";
  EXPECT_FALSE(planned(c.Loop(0, 4), [&](const BufferNode* b) { return b != c.s.get(); })) << "unaligned base";
  // A strided read: A[8t + 2v].
  Stmt strided = MakeFor(c.v, MakeInt(0), MakeInt(4), ForKind::kVectorized,
                         MakeStore(c.s, {MakeInt(4) * c.te + c.ve}, MakeLoad(c.a, {MakeInt(8) * c.te + MakeInt(2) * c.ve})));
  EXPECT_FALSE(planned(strided));
  // A guard that moves with the lanes.
  Stmt guarded = MakeFor(c.v, MakeInt(0), MakeInt(4), ForKind::kVectorized,
                         MakeIfThenElse(c.te * MakeInt(4) + c.ve < MakeInt(62),
                                        MakeStore(c.s, {MakeInt(4) * c.te + c.ve}, MakeFloat(0.0))));
  EXPECT_FALSE(planned(guarded));
  // A lane reading another lane's stored element: S[4t + v] = S[4t + 3].
  Stmt shifted = MakeFor(c.v, MakeInt(0), MakeInt(4), ForKind::kVectorized,
                         MakeStore(c.s, {MakeInt(4) * c.te + c.ve}, MakeLoad(c.s, {MakeInt(4) * c.te + MakeInt(3)})));
  EXPECT_FALSE(planned(shifted));
}

// A one-kernel program of 16 threads: out[4t + v] = A[8t + v] * 2 + A[0] for v in [0, 4)
// vectorized. `out` is a global argument, so its base is aligned.
GpuProgram ScaleProgram() {
  CopyLoop c;
  Buffer out = MakeBuffer("out", DataType::Float32(), {64});
  Expr value = MakeLoad(c.a, {MakeInt(8) * c.te + c.ve}) * MakeFloat(2.0) + MakeLoad(c.a, {MakeInt(0)});
  GpuProgram program;
  program.name = "scale";
  program.args = {c.a, out};
  lower::gpu::GpuKernel kernel;
  kernel.name = "scale";
  kernel.params = {c.a, out};
  kernel.written = {out};
  kernel.block = {16, 1, 1};
  kernel.axes = {{"threadIdx.x", c.t, 16}};
  kernel.body = MakeFor(c.v, MakeInt(0), MakeInt(4), ForKind::kVectorized,
                        MakeStore(out, {MakeInt(4) * c.te + c.ve}, value));
  program.kernels.push_back(kernel);
  return program;
}

TEST(GpuVectorAccess, ComputedLanesPrintFromVectorsAndRun) {
  GpuProgram program = ScaleProgram();
  std::string cuda = codegen::gpu::PrintGpuSource(program, Dialect::kCuda);
  ExpectContains(cuda, "const float4 A_vec = *reinterpret_cast<const float4*>(A + (t * 8));");
  ExpectContains(cuda, "*reinterpret_cast<float4*>(out + (t * 4)) = make_float4(((A_vec.x * 2.0f) + A[0]), ");
  ExpectContains(cuda, "((A_vec.w * 2.0f) + A[0]));");
  std::string opencl = codegen::gpu::PrintGpuSource(program, Dialect::kOpencl);
  ExpectContains(opencl, "const float4 A_vec = vload4(0, A + (t * 8));");
  ExpectContains(opencl, "vstore4((float4)(((A_vec.x * 2.0f) + A[0]), ");
  std::vector<double> a(128), expected(64);
  for (size_t i = 0; i < a.size(); ++i) a[i] = double(i % 13) - 6.0;
  for (size_t t = 0; t < 16; ++t) {
    for (size_t v = 0; v < 4; ++v) expected[4 * t + v] = a[8 * t + v] * 2 + a[0];
  }
  StatusOr<std::vector<double>> ran = testing::RunOnOpencl(program, {{"A", a}});
  if (ran.status().code() != StatusCode::kUnavailable) {
    ASSERT_TRUE(ran.ok()) << ran.status().message() << "\n" << opencl;
    EXPECT_EQ(*ran, expected);
  }
  StatusOr<std::string> compiled = testing::CompileWithNvrtc(program);
  if (compiled.status().code() != StatusCode::kUnavailable) {
    EXPECT_TRUE(compiled.ok()) << compiled.status().message() << "\n" << cuda;
  }
}

std::shared_ptr<const Workload> Spec(const std::string& spec) {
  StatusOr<Workload> w = ParseWorkloadSpec(spec);
  TUNED_CHECK(w.ok()) << w.status().message();
  return std::make_shared<const Workload>(std::move(w).value());
}

// The tiled matmul of `spec` with fills vectorized by `width`, checked against the float64
// reference in the race-checking interpreter and on PoCL, and compiled for sm_90.
GpuProgram CheckedVectorMatmul(const std::string& spec, const testing::MatmulTiles& tiles) {
  auto w = Spec(spec);
  StatusOr<GpuProgram> program = lower::gpu::LowerGpu(testing::GpuTiledMatmul(w, tiles), lower::gpu::GpuLimits{}, "tiled_matmul");
  TUNED_CHECK(program.ok()) << program.status().message();
  auto inputs = RandomInputs(*w, 5);
  auto reference = EvaluateReference(*w, inputs);
  TUNED_CHECK(reference.ok());
  double tolerance = ToleranceFor(DataType::Float32());
  StatusOr<std::vector<double>> interpreted = lower::InterpretGpu(*program, inputs);
  EXPECT_TRUE(interpreted.ok()) << interpreted.status().message();
  if (interpreted.ok()) {
    EXPECT_LE(MaxRelativeError(*interpreted, reference->at("C")), tolerance) << spec;
  }
  StatusOr<std::vector<double>> ran = testing::RunOnOpencl(*program, inputs);
  if (ran.status().code() != StatusCode::kUnavailable) {
    EXPECT_TRUE(ran.ok()) << ran.status().message();
    if (ran.ok()) {
      EXPECT_LE(MaxRelativeError(*ran, reference->at("C")), tolerance) << spec << " on OpenCL";
    }
  }
  StatusOr<std::string> compiled = testing::CompileWithNvrtc(*program);
  if (compiled.status().code() != StatusCode::kUnavailable) {
    EXPECT_TRUE(compiled.ok()) << compiled.status().message() << "\n"
                               << codegen::gpu::PrintGpuSource(*program, Dialect::kCuda);
  }
  return std::move(program).value();
}

TEST(GpuVectorAccess, VectorizedFillsPrintFloat4AndVload4AndStayCorrect) {
  testing::MatmulTiles tiles{.block_m = 64, .block_n = 64, .threads_m = 16, .threads_n = 16, .tile_k = 16, .fill_vector = 4};
  GpuProgram program = CheckedVectorMatmul("matmul(M=128,N=128,K=64)", tiles);
  std::string cuda = codegen::gpu::PrintGpuSource(program, Dialect::kCuda);
  for (const char* buffer : {"A", "B"}) {
    std::string b = buffer;
    ExpectContains(cuda, "__shared__ __align__(16) float " + b + "_shared[1024];");
    ExpectContains(cuda, "*reinterpret_cast<float4*>(" + b + "_shared + ");
    ExpectContains(cuda, "*reinterpret_cast<const float4*>(" + b + " + ");
  }
  std::string opencl = codegen::gpu::PrintGpuSource(program, Dialect::kOpencl);
  ExpectContains(opencl, "__local float A_shared[1024] __attribute__((aligned(16)));");
  ExpectContains(opencl, "vstore4(vload4(0, A + ");
  ExpectContains(opencl, "vstore4(vload4(0, B + ");
  EXPECT_EQ(codegen::gpu::PrintGpuSource(program, Dialect::kCuda), cuda);  // deterministic
}

TEST(GpuVectorAccess, FillRunsNotAMultipleOfFourStayScalar) {
  // A's runs are the k tile, 6 long: split by 4, the last run is cut short by a guard that
  // moves with the lanes, so A's fill is a plain loop; B's runs (64 columns) are float4.
  testing::MatmulTiles tiles{.block_m = 32, .block_n = 64, .threads_m = 8, .threads_n = 16, .tile_k = 6, .fill_vector = 4};
  GpuProgram program = CheckedVectorMatmul("matmul(M=64,N=128,K=36)", tiles);
  std::string cuda = codegen::gpu::PrintGpuSource(program, Dialect::kCuda);
  ExpectContains(cuda, "reinterpret_cast<const float4*>(A + ", false);
  ExpectContains(cuda, "__shared__ float A_shared[192];");
  ExpectContains(cuda, "*reinterpret_cast<const float4*>(B + ");
  std::string opencl = codegen::gpu::PrintGpuSource(program, Dialect::kOpencl);
  ExpectContains(opencl, "vload4(0, A + ", false);
  ExpectContains(opencl, "vload4(0, B + ");
}

}  // namespace
}  // namespace tuned

// Float32 math the code generator emits inline (vector_math_internal.h: exp, tanh, erf) and the reciprocal it
// multiplies by in place of a vector division by a lane-uniform value, checked on the JIT against
// libm and exact division: in vector lanes and in scalar code, at the special values too.

#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "compiler/codegen/llvm/codegen_llvm.h"
#include "compiler/ir/op_library.h"
#include "compiler/lower/lower.h"
#include "compiler/schedule/schedule.h"
#include "target/target.h"
#include "tests/unit/compiler/codegen/codegen_test_util.h"

namespace tuned::codegen {
namespace {

constexpr double kUlp = 1.0 / (1 << 23);  // float32's unit in the last place, relative

std::shared_ptr<const ir::Workload> Parse(const std::string& spec) {
  auto w = ir::ParseWorkloadSpec(spec);
  EXPECT_TRUE(w.ok()) << w.status().message();
  return std::make_shared<const ir::Workload>(std::move(w).value());
}

// The output of `workload` on the JIT, its last loop vectorized 16 lanes wide or left scalar.
std::vector<double> RunKernel(const std::shared_ptr<const ir::Workload>& workload,
                        const std::map<std::string, std::vector<double>>& inputs, bool vectorized) {
  auto jit = LlvmJit::Create(testing::HostTarget());
  EXPECT_TRUE(jit.ok()) << jit.status().message();
  if (!jit.ok()) return {};
  schedule::Schedule sch(workload, 0);
  if (vectorized) {
    auto loops = *sch.GetLoops(*sch.GetBlock(workload->output_stage().name));
    auto lanes = sch.Split(loops.back(), {std::monostate{}, int64_t(16)});
    EXPECT_TRUE(lanes.ok());
    EXPECT_TRUE(sch.Vectorize(lanes->back()).ok());
  }
  auto func = lower::Lower(sch);
  EXPECT_TRUE(func.ok()) << func.status().message();
  auto out = testing::RunOnJit(**jit, *func, inputs);
  EXPECT_TRUE(out.ok()) << out.status().message();
  return out.ok() ? *out : std::vector<double>{};
}

TEST(VectorMathTest, ExpIsWithinTwoUlpOfLibmAndKeepsItsSpecialValues) {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> x = {0.0, -0.0, 1.0, -1.0, 0.5, 1e-8, -1e-8, 10.0, -10.0, 88.5, 88.72, -87.0,
                           -87.3, 100.0, -100.0, 1e30, -1e30, inf, -inf, std::nan("")};
  while (x.size() < 128) x.push_back(-90.0 + 180.0 * double(x.size()) / 128.0);  // every binade in range
  auto workload = Parse("tdl: input x: float32[128]; out[i: 128]: float32 = exp(x[i])");
  for (bool vectorized : {true, false}) {
    std::vector<double> out = RunKernel(workload, {{"x", x}}, vectorized);
    ASSERT_EQ(out.size(), x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      const float want = std::exp(float(x[i]));
      SCOPED_TRACE("exp(" + std::to_string(x[i]) + (vectorized ? ") in vector lanes" : ") in scalar code"));
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(out[i])) << out[i];
      } else if (std::isinf(want)) {
        EXPECT_EQ(out[i], inf);
      } else if (want < std::numeric_limits<float>::min()) {
        // No subnormal results: below ln(FLT_MIN) the result is 0.
        EXPECT_GE(out[i], 0.0);
        EXPECT_LE(out[i], std::numeric_limits<float>::min());
      } else {
        EXPECT_LE(std::abs(out[i] - double(want)), 2 * kUlp * double(want)) << out[i] << " vs " << want;
      }
    }
  }
}

// On AVX-512, a 16-lane exp puts 2^n in with scalef (and then returns expf's subnormals, which
// the test above allows); elsewhere with integer arithmetic on the exponent field.
TEST(VectorMathTest, ASixteenLaneExpUsesScalefWhereTheTargetHasAvx512) {
  auto workload = Parse("tdl: input x: float32[64]; out[i: 64]: float32 = exp(x[i])");
  schedule::Schedule sch(workload, 0);
  auto loops = *sch.GetLoops(*sch.GetBlock("out"));
  auto lanes = sch.Split(loops.back(), {std::monostate{}, int64_t(16)});
  ASSERT_TRUE(lanes.ok());
  ASSERT_TRUE(sch.Vectorize(lanes->back()).ok());
  auto func = lower::Lower(sch);
  ASSERT_TRUE(func.ok());
  for (const char* cpu : {"znver4", "znver3"}) {
    auto target = target::ParseTarget(std::string("llvm -mcpu=") + cpu + " -num-cores=2");
    ASSERT_TRUE(target.ok());
    auto ir = EmitLlvmIr({*func}, *target, {}, /*optimize=*/false);
    ASSERT_TRUE(ir.ok()) << ir.status().message();
    EXPECT_EQ(ir->find("llvm.x86.avx512.mask.scalef.ps.512") != std::string::npos, std::string(cpu) == "znver4")
        << cpu;
  }
}

// tanh and erf against libm, densely over [-6, 6] and at the special values: within 4 ulp, and
// within 1e-7 absolutely near 0.
TEST(VectorMathTest, TanhAndErfAreWithinFourUlpOfLibm) {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> x = {0.0, -0.0, 1e-30, -1e-8, 1e-4, 0.4999, 0.5, -0.5001, 1.0, 3.9, 9.0, -20.0,
                           inf, -inf, std::nan("")};
  while (x.size() < 4096) x.push_back(-6.0 + 12.0 * double(x.size()) / 4096.0);
  struct Function {
    const char* name;
    float (*libm)(float);
  };
  for (const Function& f : {Function{"tanh", std::tanh}, Function{"erf", std::erf}}) {
    auto workload = Parse(std::string("tdl: input x: float32[4096]; out[i: 4096]: float32 = ") + f.name + "(x[i])");
    for (bool vectorized : {true, false}) {
      std::vector<double> out = RunKernel(workload, {{"x", x}}, vectorized);
      ASSERT_EQ(out.size(), x.size());
      for (size_t i = 0; i < x.size(); ++i) {
        const float want = f.libm(float(x[i]));
        SCOPED_TRACE(std::string(f.name) + "(" + std::to_string(x[i]) + (vectorized ? ") in vector lanes" : ") in scalar code"));
        if (std::isnan(want)) {
          EXPECT_TRUE(std::isnan(out[i])) << out[i];
        } else {
          EXPECT_LE(std::abs(out[i] - double(want)), std::max(4 * kUlp * std::abs(double(want)), 1e-7))
              << out[i] << " vs " << want;
          EXPECT_EQ(std::signbit(out[i]), std::signbit(want)) << out[i] << " vs " << want;
        }
      }
    }
  }
}

TEST(VectorMathTest, ADivisionByALaneUniformValueIsWithinAnUlpOfTheQuotient) {
  auto workload = Parse("tdl: input x: float32[4, 64]; input s: float32[4]; "
                        "out[i: 4, j: 64]: float32 = x[i, j] / s[i]");
  std::vector<double> x(256), s = {3.0, -7.0, 0.1, 1e-3};
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(double(i)) * 100.0;
  for (bool vectorized : {true, false}) {
    std::vector<double> out = RunKernel(workload, {{"x", x}, {"s", s}}, vectorized);
    ASSERT_EQ(out.size(), x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      const float want = float(x[i]) / float(s[i / 64]);
      EXPECT_LE(std::abs(out[i] - double(want)), 1.5 * kUlp * std::abs(double(want)))
          << x[i] << " / " << s[i / 64] << (vectorized ? " in vector lanes" : " in scalar code");
    }
  }
}

}  // namespace
}  // namespace tuned::codegen

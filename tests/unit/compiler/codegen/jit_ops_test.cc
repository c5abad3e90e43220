// Every op of the library through lowering and the JIT, compared with the float64 reference
// at the tolerance of the output dtype: the default schedule, and random schedules (parallel,
// vectorized and unrolled loops, imperfect splits, cache stages, compute_at, inlining).
// Failures print the spec, the seed, the trace and the lowered program.

#include <algorithm>

#include <gtest/gtest.h>

#include "compiler/codegen/llvm/llvm_jit.h"
#include "compiler/ir/evaluator.h"
#include "compiler/ir/ir_printer.h"
#include "compiler/ir/op_library.h"
#include "compiler/lower/lower.h"
#include "compiler/schedule/schedule.h"
#include "tests/support/random_schedule.h"
#include "tests/unit/compiler/codegen/codegen_test_util.h"

namespace tuned::codegen {
namespace {

constexpr int kSchedulesPerSpec = 12;

class JitOpsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    StatusOr<std::unique_ptr<LlvmJit>> jit = LlvmJit::Create(testing::HostTarget());
    ASSERT_TRUE(jit.ok()) << jit.status().message();
    jit_ = std::move(jit).value();
  }
  std::unique_ptr<LlvmJit> jit_;
};

TEST_F(JitOpsTest, EveryOpWithDefaultScheduleMatchesReference) {
  std::vector<std::string> seen_ops;
  for (uint64_t shape_seed = 1; shape_seed <= 3; ++shape_seed) {
    for (const std::string& spec : ::tuned::testing::SmallSpecs(shape_seed)) {
      StatusOr<ir::Workload> parsed = ir::ParseWorkloadSpec(spec);
      ASSERT_TRUE(parsed.ok()) << spec << ": " << parsed.status().message();
      auto workload = std::make_shared<const ir::Workload>(std::move(parsed).value());
      seen_ops.push_back(workload->op());
      auto inputs = ir::RandomInputs(*workload, shape_seed);
      auto reference = ir::EvaluateReference(*workload, inputs);
      ASSERT_TRUE(reference.ok()) << reference.status().message();
      schedule::Schedule sch(workload, /*seed=*/shape_seed);
      StatusOr<lower::LoweredFunc> func = lower::Lower(sch, "op_kernel");
      ASSERT_TRUE(func.ok()) << spec << ": " << func.status().message();
      StatusOr<std::vector<double>> actual = testing::RunOnJit(*jit_, *func, inputs);
      ASSERT_TRUE(actual.ok()) << spec << ": " << actual.status().message();
      EXPECT_LE(ir::MaxRelativeError(*actual, reference->at(workload->output_stage().name)),
                ir::ToleranceFor(workload->output_stage().output->dtype))
          << spec << "\n" << ir::ToString(func->body);
    }
  }
  for (const ir::OpDef& op : ir::OpLibrary()) {
    EXPECT_NE(std::find(seen_ops.begin(), seen_ops.end(), op.name), seen_ops.end())
        << "op " << op.name << " is not covered by SmallSpecs";
  }
}

TEST_F(JitOpsTest, RandomSchedulesMatchReference) {
  int run = 0, parallel = 0, vectorized = 0;
  for (uint64_t shape_seed = 1; shape_seed <= 2; ++shape_seed) {
    for (const std::string& spec : ::tuned::testing::SmallSpecs(shape_seed)) {
      StatusOr<ir::Workload> parsed = ir::ParseWorkloadSpec(spec);
      ASSERT_TRUE(parsed.ok()) << spec;
      auto workload = std::make_shared<const ir::Workload>(std::move(parsed).value());
      auto inputs = ir::RandomInputs(*workload, shape_seed);
      auto reference = ir::EvaluateReference(*workload, inputs);
      ASSERT_TRUE(reference.ok());
      const std::vector<double>& expected = reference->at(workload->output_stage().name);
      double tolerance = ir::ToleranceFor(workload->output_stage().output->dtype);
      for (int i = 0; i < kSchedulesPerSpec; ++i) {
        uint64_t seed = shape_seed * 100000 + uint64_t(i);
        schedule::Schedule sch = ::tuned::testing::RandomSchedule(workload, seed);
        StatusOr<lower::LoweredFunc> func = lower::Lower(sch, "candidate");
        if (!func.ok()) continue;  // the compiler-core property test covers lowering failures
        std::string program = ir::ToString(func->body);
        parallel += program.find("parallel") != std::string::npos;
        vectorized += program.find("vectorized") != std::string::npos;
        std::string context = spec + " seed " + std::to_string(seed) + "\ntrace:\n" +
                              sch.trace().ToString() + "program:\n" + program;
        StatusOr<std::vector<double>> actual = testing::RunOnJit(*jit_, *func, inputs);
        ASSERT_TRUE(actual.ok()) << actual.status().message() << "\n" << context;
        ASSERT_LE(ir::MaxRelativeError(*actual, expected), tolerance) << context;
        ++run;
      }
    }
  }
  // The sample must exercise the loop kinds this test is about.
  EXPECT_GT(run, 100);
  EXPECT_GT(parallel, 10);
  EXPECT_GT(vectorized, 10);
}

}  // namespace
}  // namespace tuned::codegen

// Property test: random valid schedules of every op compute what the float64 reference
// computes, and their traces replay to the same program. Failures print the seed.

#include <gtest/gtest.h>

#include "compiler/ir/evaluator.h"
#include "compiler/ir/ir_printer.h"
#include "compiler/ir/op_library.h"
#include "compiler/lower/interpreter.h"
#include "compiler/lower/lower.h"
#include "tests/support/random_schedule.h"

namespace tuned {
namespace {

constexpr int kSchedulesPerOp = 40;  // x 13 specs x 5 shape seeds = 2600 schedules

TEST(RandomSchedules, MatchReferenceAndReplay) {
  int lowered = 0, attempted = 0;
  for (uint64_t shape_seed = 1; shape_seed <= 5; ++shape_seed) {
    for (const std::string& spec : testing::SmallSpecs(shape_seed)) {
      StatusOr<ir::Workload> parsed = ir::ParseWorkloadSpec(spec);
      ASSERT_TRUE(parsed.ok()) << spec << ": " << parsed.status().message();
      auto workload = std::make_shared<const ir::Workload>(std::move(parsed).value());
      auto inputs = ir::RandomInputs(*workload, shape_seed);
      auto reference = ir::EvaluateReference(*workload, inputs);
      ASSERT_TRUE(reference.ok()) << reference.status().message();
      const std::vector<double>& expected = reference->at(workload->output_stage().name);
      double tolerance = ir::ToleranceFor(workload->output_stage().output->dtype);
      for (int i = 0; i < kSchedulesPerOp; ++i) {
        uint64_t seed = shape_seed * 100000 + uint64_t(i);
        schedule::Schedule sch = testing::RandomSchedule(workload, seed);
        ++attempted;
        StatusOr<lower::LoweredFunc> func = lower::Lower(sch);
        if (!func.ok()) {
          // Some accepted sequences only fail at lowering (e.g. a later reorder moved a loop
          // that another block is computed at inside a reduction); they must say why.
          EXPECT_EQ(func.status().code(), StatusCode::kInvalidArgument) << func.status().message();
          continue;
        }
        ++lowered;
        std::string context = spec + " seed " + std::to_string(seed) + "\ntrace:\n" +
                              sch.trace().ToString() + "program:\n" + ir::ToString(func->body);
        StatusOr<std::vector<double>> actual = lower::Interpret(*func, inputs);
        ASSERT_TRUE(actual.ok()) << actual.status().message() << "\n" << context;
        double error = ir::MaxRelativeError(*actual, expected);
        ASSERT_LE(error, tolerance) << context;

        StatusOr<schedule::Schedule> replayed = schedule::ReplayTrace(workload, sch.trace(), seed + 1);
        ASSERT_TRUE(replayed.ok()) << replayed.status().message() << "\n" << context;
        StatusOr<lower::LoweredFunc> again = lower::Lower(*replayed);
        ASSERT_TRUE(again.ok()) << again.status().message();
        ASSERT_EQ(ir::ToString(again->body), ir::ToString(func->body)) << context;
      }
    }
  }
  // Nearly every accepted schedule must lower; a drop here means the primitives accept too much.
  EXPECT_GE(lowered * 10, attempted * 9) << lowered << " of " << attempted << " lowered";
}

}  // namespace
}  // namespace tuned

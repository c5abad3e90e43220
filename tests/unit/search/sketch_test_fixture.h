#ifndef TUNED_TESTS_UNIT_SEARCH_SKETCH_TEST_FIXTURE_H_
#define TUNED_TESTS_UNIT_SEARCH_SKETCH_TEST_FIXTURE_H_

/// \file
/// The fixture of the tests of one CPU sketch: samples candidates of a named sketch and checks
/// each against the float64 reference through the interpreter and the JIT.

#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "compiler/codegen/llvm/llvm_jit.h"
#include "compiler/ir/evaluator.h"
#include "compiler/ir/ir_printer.h"
#include "compiler/lower/interpreter.h"
#include "compiler/lower/lower.h"
#include "server/search/design_space.h"
#include "tests/unit/compiler/codegen/codegen_test_util.h"
#include "tests/unit/search/search_test_context.h"

namespace tuned::search {

/// The sketch named `name`, or null where the design space has none by that name.
inline const Sketch* FindSketch(const std::vector<Sketch>& sketches, const std::string& name) {
  for (const Sketch& s : sketches) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

class SketchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto jit = codegen::LlvmJit::Create(codegen::testing::HostTarget());
    ASSERT_TRUE(jit.ok()) << jit.status().message();
    jit_ = std::move(jit).value();
  }

  // Samples `seeds` candidates of the sketch `name`, checks each through the interpreter and the
  // JIT; returns their lowered programs.
  std::vector<std::string> SampleAndCheck(const SearchContext& ctx, const std::string& name, int seeds) {
    std::vector<Sketch> sketches = GenerateSketches(ctx);
    const Sketch* sketch = FindSketch(sketches, name);
    EXPECT_NE(sketch, nullptr) << name << " for " << ctx.workload->key();
    if (sketch == nullptr) return {};
    auto inputs = ir::RandomInputs(*ctx.workload, 1);
    auto reference = ir::EvaluateReference(*ctx.workload, inputs);
    EXPECT_TRUE(reference.ok());
    const std::vector<double>& expected = reference->at(ctx.workload->output_stage().name);
    const double tolerance = ir::ToleranceFor(ctx.workload->output_stage().output->dtype);
    std::vector<std::string> programs;
    for (int seed = 0; seed < seeds; ++seed) {
      auto sch = SampleSketch(ctx, *sketch, uint64_t(seed));
      EXPECT_TRUE(sch.ok()) << name << ": " << sch.status().message();
      if (!sch.ok()) continue;
      auto func = lower::Lower(*sch);
      EXPECT_TRUE(func.ok()) << func.status().message() << "\n" << sch->trace().ToString();
      if (!func.ok()) continue;
      std::string program = ir::ToString(func->body);
      auto interpreted = lower::Interpret(*func, inputs);
      EXPECT_TRUE(interpreted.ok()) << interpreted.status().message();
      if (interpreted.ok()) {
        EXPECT_LE(ir::MaxRelativeError(*interpreted, expected), tolerance) << program;
      }
      auto jitted = codegen::testing::RunOnJit(*jit_, *func, inputs);
      EXPECT_TRUE(jitted.ok()) << jitted.status().message();
      if (jitted.ok()) {
        EXPECT_LE(ir::MaxRelativeError(*jitted, expected), tolerance) << program;
      }
      programs.push_back(program);
    }
    return programs;
  }

  std::unique_ptr<codegen::LlvmJit> jit_;
};

}  // namespace tuned::search

#endif  // TUNED_TESTS_UNIT_SEARCH_SKETCH_TEST_FIXTURE_H_

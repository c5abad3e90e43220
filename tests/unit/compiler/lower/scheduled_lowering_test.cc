// Schedules written with the primitives, checked through the program they lower to: the loops
// it has and the values it computes (against the float64 reference).

#include <gtest/gtest.h>

#include "compiler/ir/evaluator.h"
#include "compiler/ir/ir_printer.h"
#include "compiler/ir/op_library.h"
#include "compiler/lower/interpreter.h"
#include "compiler/lower/lower.h"
#include "compiler/schedule/schedule.h"

namespace tuned::schedule {
namespace {

std::shared_ptr<const ir::Workload> Spec(const std::string& spec) {
  auto w = ir::ParseWorkloadSpec(spec);
  EXPECT_TRUE(w.ok()) << w.status().message();
  return std::make_shared<const ir::Workload>(std::move(w).value());
}

class ScheduleTest : public ::testing::Test {
 protected:
  std::shared_ptr<const ir::Workload> matmul = Spec("matmul(M=16,N=12,K=8)");
  Schedule sch{matmul, 1};
  BlockRV C() { return *sch.GetBlock("C"); }
  std::vector<LoopRV> Loops(BlockRV b) { return *sch.GetLoops(b); }

  // The scheduled program still computes matmul.
  void ExpectCorrect() {
    auto func = lower::Lower(sch);
    ASSERT_TRUE(func.ok()) << func.status().message();
    auto inputs = ir::RandomInputs(*matmul, 3);
    auto expected = ir::EvaluateReference(*matmul, inputs);
    auto actual = lower::Interpret(*func, inputs);
    ASSERT_TRUE(actual.ok()) << actual.status().message() << "\n" << ir::ToString(func->body);
    EXPECT_LE(ir::MaxRelativeError(*actual, expected->at("C")), 1e-4);
  }
};

TEST_F(ScheduleTest, SplitWithRemainderKeepsResults) {
  auto loops = Loops(C());
  auto parts = sch.Split(loops[0], {std::monostate{}, int64_t(5)});  // 16 = 4 x 5 - 4
  ASSERT_TRUE(parts.ok());
  EXPECT_EQ(parts->size(), 2u);
  std::string program = ir::ToString(lower::Lower(sch)->body);
  EXPECT_NE(program.find("if (((C.i_0 * 5) + C.i_1) < 16)"), std::string::npos) << program;
  ExpectCorrect();
}

// A register-tiled, packed, vectorized and parallel matmul written with the primitives.
TEST_F(ScheduleTest, TiledMatmulWithCacheStagesComputesCorrectly) {
  BlockRV c = C();
  auto loops = Loops(c);
  auto i = *sch.Split(loops[0], {std::monostate{}, int64_t(4)});
  auto j = *sch.Split(loops[1], {std::monostate{}, int64_t(4)});
  auto k = *sch.Split(loops[2], {std::monostate{}, int64_t(2)});
  ASSERT_TRUE(sch.Reorder({i[0], j[0], k[0], k[1], i[1], j[1]}).ok());
  BlockRV wb = *sch.CacheWrite(c, "local");
  ASSERT_TRUE(sch.ReverseComputeAt(wb, j[0]).ok());
  BlockRV b_local = *sch.CacheRead(c, 1, "local");
  ASSERT_TRUE(sch.ComputeAt(b_local, k[0]).ok());
  ASSERT_TRUE(sch.Vectorize(j[1]).ok());
  ASSERT_TRUE(sch.Parallel(i[0]).ok());
  ASSERT_TRUE(sch.DecomposeReduction(c, k[0]).ok());
  std::string program = ir::ToString(lower::Lower(sch)->body);
  EXPECT_NE(program.find("allocate C_local: float32[4, 4] local"), std::string::npos) << program;
  EXPECT_NE(program.find("allocate B_local: float32[2, 4] local"), std::string::npos) << program;
  ExpectCorrect();
}

}  // namespace
}  // namespace tuned::schedule

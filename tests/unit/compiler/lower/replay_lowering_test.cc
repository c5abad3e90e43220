// Replayed traces, checked through the programs they lower to: replay reproduces the schedule,
// other decisions give another program, corrupted traces fail with an error, never a crash.

#include <random>

#include <gtest/gtest.h>

#include "compiler/ir/ir_printer.h"
#include "compiler/ir/op_library.h"
#include "compiler/lower/lower.h"
#include "compiler/schedule/schedule.h"
#include "tests/support/example_schedules.h"
#include "tests/support/random_schedule.h"
#include "tuned/v1/trace.pb.h"

namespace tuned::schedule {
namespace {

using testing::TiledMatmul;

std::shared_ptr<const ir::Workload> Spec(const std::string& spec) {
  return std::make_shared<const ir::Workload>(*ir::ParseWorkloadSpec(spec));
}

TEST(Trace, ReplayReproducesTheSchedule) {
  auto w = Spec("matmul(M=16,N=16,K=4)");
  Schedule sch = TiledMatmul(w);
  auto replayed = ReplayTrace(w, sch.trace(), /*seed=*/999);
  ASSERT_TRUE(replayed.ok()) << replayed.status().message();
  EXPECT_EQ(ir::ToString(lower::Lower(*replayed)->body), ir::ToString(lower::Lower(sch)->body));
  EXPECT_EQ(replayed->trace(), sch.trace());
}

TEST(Trace, ReplayWithOtherDecisionsGivesAnotherCandidate) {
  auto w = Spec("matmul(M=16,N=16,K=4)");
  Schedule sch = TiledMatmul(w);
  int sample = -1;
  for (const auto& [index, values] : sch.trace().decisions) sample = index;
  ASSERT_GE(sample, 0);
  std::vector<int64_t> other = sch.trace().decisions.at(sample) == std::vector<int64_t>{2, 8}
                                   ? std::vector<int64_t>{4, 4}
                                   : std::vector<int64_t>{2, 8};
  auto mutated = ReplayTrace(w, sch.trace(), 0, {{sample, other}});
  ASSERT_TRUE(mutated.ok()) << mutated.status().message();
  EXPECT_EQ(mutated->trace().decisions.at(sample), other);
  EXPECT_NE(ir::ToString(lower::Lower(*mutated)->body), ir::ToString(lower::Lower(sch)->body));
  auto invalid = ReplayTrace(w, sch.trace(), 0, {{sample, {3, 5}}});
  ASSERT_FALSE(invalid.ok());
  EXPECT_NE(invalid.status().message().find("multiplies to 15"), std::string::npos) << invalid.status().message();
}

// Random corruption of real traces: replay may fail, but always with an error, never a crash.
TEST(Trace, CorruptedTracesNeverCrashReplay) {
  std::mt19937_64 rng(5);
  auto w = Spec("conv2d_nchw(C=2,H=6,W=6,F=2,pad=1)");
  int rejected = 0;
  for (int n = 0; n < 300; ++n) {
    Schedule sch = testing::RandomSchedule(w, n, 10);
    v1::Trace proto;
    TraceToProto(sch.trace(), &proto);
    if (proto.instructions_size() == 0) continue;
    auto* inst = proto.mutable_instructions(int(rng() % proto.instructions_size()));
    switch (rng() % 4) {
      case 0: if (inst->inputs_size()) inst->mutable_inputs(0)->set_int_value(int64_t(rng() % 7) - 3); break;
      case 1: inst->clear_str_attrs(); break;
      case 2: inst->add_int_attrs(-5); inst->clear_outputs(); break;
      case 3: if (inst->inputs_size()) inst->mutable_inputs()->RemoveLast(); break;
    }
    auto trace = TraceFromProto(proto);
    if (!trace.ok()) { ++rejected; continue; }
    auto replayed = ReplayTrace(w, *trace);
    if (!replayed.ok()) { ++rejected; continue; }
    (void)lower::Lower(*replayed);
  }
  EXPECT_GT(rejected, 0);
}

}  // namespace
}  // namespace tuned::schedule

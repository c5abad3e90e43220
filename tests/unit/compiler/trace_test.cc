#include <random>

#include <gtest/gtest.h>

#include "compiler/ir/ir_printer.h"
#include "compiler/ir/op_library.h"
#include "compiler/lower/lower.h"
#include "compiler/schedule/schedule.h"
#include "tests/support/random_schedule.h"
#include "tuned/v1/trace.pb.h"

namespace tuned::schedule {
namespace {

std::shared_ptr<const ir::Workload> Spec(const std::string& spec) {
  return std::make_shared<const ir::Workload>(*ir::ParseWorkloadSpec(spec));
}

Schedule TiledMatmul(std::shared_ptr<const ir::Workload> w) {
  Schedule sch(w, 42);
  BlockRV c = *sch.GetBlock("C");
  auto loops = *sch.GetLoops(c);
  auto tiles = *sch.SamplePerfectTile(loops[0], 2, 8);
  auto i = *sch.Split(loops[0], {tiles[0], tiles[1]});
  auto j = *sch.Split(loops[1], {std::monostate{}, int64_t(4)});
  EXPECT_TRUE(sch.Reorder({i[0], j[0], i[1], j[1]}).ok());
  BlockRV wb = *sch.CacheWrite(c, "local");
  EXPECT_TRUE(sch.ReverseComputeAt(wb, j[0]).ok());
  EXPECT_TRUE(sch.Parallel(i[0]).ok());
  return sch;
}

TEST(Trace, RoundTripsThroughProtoAndJson) {
  Schedule sch = TiledMatmul(Spec("matmul(M=16,N=16,K=4)"));
  v1::Trace proto;
  TraceToProto(sch.trace(), &proto);
  auto back = TraceFromProto(proto);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, sch.trace());
  std::string json = TraceToJson(sch.trace());
  EXPECT_NE(json.find("\"sample_perfect_tile\""), std::string::npos) << json;
  auto from_json = TraceFromJson(json);
  ASSERT_TRUE(from_json.ok()) << from_json.status().message();
  EXPECT_EQ(*from_json, sch.trace());
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

TEST(Trace, TraceForAnotherWorkloadIsAnErrorNamingTheInstruction) {
  Schedule sch = TiledMatmul(Spec("matmul(M=16,N=16,K=4)"));
  auto replayed = ReplayTrace(Spec("softmax(M=4,N=4)"), sch.trace());
  ASSERT_FALSE(replayed.ok());
  EXPECT_NE(replayed.status().message().find("trace instruction 0 (get_block): get_block: no block named 'C'"),
            std::string::npos)
      << replayed.status().message();
  // Same op, other shape: the sampled tiles no longer divide the loop.
  auto other_shape = ReplayTrace(Spec("matmul(M=10,N=16,K=4)"), sch.trace());
  ASSERT_FALSE(other_shape.ok());
  EXPECT_NE(other_shape.status().message().find("sample_perfect_tile"), std::string::npos);
}

TEST(Trace, StructurallyInvalidTracesAreRejected) {
  v1::Trace proto;
  TraceToProto(TiledMatmul(Spec("matmul(M=16,N=16,K=4)")).trace(), &proto);
  v1::Trace bad_version = proto;
  bad_version.set_version(7);
  EXPECT_NE(TraceFromProto(bad_version).status().message().find("trace version 7 is not supported"),
            std::string::npos);
  v1::Trace bad_kind = proto;
  bad_kind.mutable_instructions(1)->set_kind("teleport");
  EXPECT_NE(TraceFromProto(bad_kind).status().message().find("unknown instruction kind 'teleport'"),
            std::string::npos);
  v1::Trace undefined = proto;
  undefined.mutable_instructions(1)->mutable_inputs(0)->set_rv(999);
  EXPECT_NE(TraceFromProto(undefined).status().message().find("uses v999 before it is defined"),
            std::string::npos);
  v1::Trace bad_decision = proto;
  bad_decision.add_decisions()->set_instruction(0);
  EXPECT_NE(TraceFromProto(bad_decision).status().message().find("not a sampling instruction"),
            std::string::npos);
  EXPECT_FALSE(TraceFromJson("{not json").ok());
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

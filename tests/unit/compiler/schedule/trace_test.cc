// Traces: proto and JSON round trips, and the errors of traces that do not fit.

#include <gtest/gtest.h>

#include "compiler/ir/op_library.h"
#include "compiler/schedule/schedule.h"
#include "tests/support/example_schedules.h"
#include "tuned/v1/trace.pb.h"

namespace tuned::schedule {
namespace {

using testing::TiledMatmul;

std::shared_ptr<const ir::Workload> Spec(const std::string& spec) {
  return std::make_shared<const ir::Workload>(*ir::ParseWorkloadSpec(spec));
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

}  // namespace
}  // namespace tuned::schedule

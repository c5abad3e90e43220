// Trace hashing and the readable rendering of traces and statuses.

#include "tuning_db/record_text.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/unit/tuning_db/db_test_util.h"
#include "tuning_db/trace_hash.h"

namespace tuned::db {
namespace {

using ::testing::HasSubstr;
using testing::kCpu;
using testing::MakeRecord;

TEST(TraceHash, IsStableHexAndIgnoresVersion) {
  v1::Trace trace = MakeRecord(64, kCpu, 1, 0.1).trace();
  const std::string hash = TraceHash(trace);
  EXPECT_EQ(hash.size(), 64u);
  EXPECT_EQ(hash.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_EQ(TraceHash(trace), hash);
  trace.set_version(7);
  EXPECT_EQ(TraceHash(trace), hash);
}

TEST(TraceHash, ChangesWithDecisionsAndInstructions) {
  v1::Trace trace = MakeRecord(64, kCpu, 1, 0.1).trace();
  const std::string hash = TraceHash(trace);
  v1::Trace other_decision = trace;
  other_decision.mutable_decisions(0)->set_values(1, 16);
  EXPECT_NE(TraceHash(other_decision), hash);
  v1::Trace other_attr = trace;
  other_attr.mutable_instructions(0)->set_str_attrs(0, "D");
  EXPECT_NE(TraceHash(other_attr), hash);
  EXPECT_NE(TraceHash(v1::Trace()), hash);
}

TEST(FormatTrace, PrintsOneInstructionPerLineWithDecision) {
  v1::Trace trace = MakeRecord(64, kCpu, 4, 0.1).trace();
  v1::Instruction* split = trace.add_instructions();
  split->set_kind("split");
  split->add_inputs()->set_rv(0);
  split->add_inputs()->set_none(true);
  split->add_inputs()->set_int_value(32);
  split->add_float_attrs(0.5);
  split->add_outputs(3);
  split->add_outputs(4);
  EXPECT_EQ(FormatTrace(trace),
            "   0: v0 = get_block() str=[\"C\"]\n"
            "   1: v1, v2 = sample_perfect_tile(v0) int=[2]   # decision [4, 8]\n"
            "   2: v3, v4 = split(v0, none, 32) float=[0.5]\n");
  EXPECT_EQ(FormatTrace(v1::Trace()), "(empty trace)\n");
}

TEST(FormatTrace, FlagsDecisionOfMissingInstruction) {
  v1::Trace trace = MakeRecord(64, kCpu, 4, 0.1).trace();
  trace.mutable_decisions(0)->set_instruction(9);
  EXPECT_THAT(FormatTrace(trace), HasSubstr("(decision for missing instruction 9)"));
}

TEST(Labels, AreLowerCaseWithoutPrefix) {
  EXPECT_EQ(MeasureStatusLabel(v1::MEASURE_STATUS_WRONG_RESULT), "wrong_result");
  EXPECT_EQ(MeasureStatusLabel(static_cast<v1::MeasureStatus>(99)), "status_99");
  EXPECT_EQ(TaskStateLabel(v1::TASK_STATE_RUNNING), "running");
}

}  // namespace
}  // namespace tuned::db

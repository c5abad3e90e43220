// Every message survives message -> bytes -> message and message -> JSON -> message unchanged.

#include <string>

#include <google/protobuf/util/json_util.h>
#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>

#include "tuned/v1/measure.pb.h"
#include "tuned/v1/record.pb.h"
#include "tuned/v1/task.pb.h"
#include "tuned/v1/worker_service.pb.h"

namespace {

using google::protobuf::Message;
using google::protobuf::util::MessageDifferencer;

tuned::v1::Trace SampleTrace() {
  tuned::v1::Trace trace;
  trace.set_version(1);
  auto* get_block = trace.add_instructions();
  get_block->set_kind("get_block");
  get_block->add_str_attrs("C");
  get_block->add_outputs(0);
  auto* sample = trace.add_instructions();
  sample->set_kind("sample_perfect_tile");
  sample->add_inputs()->set_rv(1);
  sample->add_int_attrs(3);   // parts
  sample->add_int_attrs(16);  // max innermost factor
  sample->add_outputs(2);
  sample->add_outputs(3);
  sample->add_outputs(4);
  auto* split = trace.add_instructions();
  split->set_kind("split");
  split->add_inputs()->set_rv(1);
  split->add_inputs()->set_none(true);
  split->add_inputs()->set_int_value(8);
  auto* decision = trace.add_decisions();
  decision->set_instruction(1);
  decision->add_values(4);
  decision->add_values(8);
  decision->add_values(32);
  return trace;
}

tuned::v1::TuningRecord SampleRecord() {
  tuned::v1::TuningRecord record;
  record.set_record_id(17);
  auto* workload = record.mutable_workload();
  workload->set_key("matmul(M=128,N=128,K=128,dtype=float32)");
  workload->set_key_sha256(std::string(64, 'a'));
  workload->set_op("matmul");
  auto* param = workload->add_params();
  param->set_name("M");
  param->set_value("128");
  workload->set_flops(2.0 * 128 * 128 * 128);
  record.mutable_target()->set_target("llvm -mcpu=znver3 -num-cores=2");
  record.mutable_target()->set_kind(tuned::v1::TARGET_KIND_LLVM_CPU);
  *record.mutable_trace() = SampleTrace();
  record.set_trace_hash(std::string(64, 'b'));
  auto* result = record.mutable_result();
  result->set_job_id("job-1");
  result->set_status(tuned::v1::MEASURE_STATUS_WRONG_RESULT);
  result->add_repeat_seconds(1.5e-3);
  result->add_repeat_seconds(1.25e-3);
  result->set_median_seconds(1.375e-3);
  result->set_error("max relative error 0.5 exceeds 1e-4");
  result->mutable_device()->set_model("AMD EPYC");
  result->mutable_device()->add_features("avx2");
  auto* config = record.mutable_config();
  config->set_repeat(5);
  config->set_min_repeat_ms(50);
  config->set_flush_cache(true);
  config->set_seed(1234567890123ULL);
  record.set_tuner_version("0.1.0");
  record.set_created_unix_ms(1796000000000);
  return record;
}

void ExpectBytesRoundTrip(const Message& original) {
  std::string bytes;
  ASSERT_TRUE(original.SerializeToString(&bytes));
  std::unique_ptr<Message> parsed(original.New());
  ASSERT_TRUE(parsed->ParseFromString(bytes));
  EXPECT_TRUE(MessageDifferencer::Equals(original, *parsed)) << parsed->DebugString();
}

void ExpectJsonRoundTrip(const Message& original) {
  std::string json;
  ASSERT_TRUE(google::protobuf::util::MessageToJsonString(original, &json).ok());
  std::unique_ptr<Message> parsed(original.New());
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(json, parsed.get()).ok()) << json;
  EXPECT_TRUE(MessageDifferencer::Equals(original, *parsed)) << json;
}

TEST(ProtoRoundTrip, TraceThroughBytesAndJson) {
  ExpectBytesRoundTrip(SampleTrace());
  ExpectJsonRoundTrip(SampleTrace());
}

TEST(ProtoRoundTrip, TuningRecordThroughBytesAndJson) {
  ExpectBytesRoundTrip(SampleRecord());
  ExpectJsonRoundTrip(SampleRecord());
}

TEST(ProtoRoundTrip, TaskStatusThroughBytesAndJson) {
  tuned::v1::TaskStatus status;
  status.set_task_id("t-1");
  status.mutable_spec()->set_workload_spec("matmul(M=64,N=64,K=64,dtype=float32)");
  status.mutable_spec()->set_trial_budget(64);
  status.mutable_spec()->mutable_search()->set_epsilon(0.05);
  status.set_state(tuned::v1::TASK_STATE_RUNNING);
  status.set_trials_done(12);
  *status.mutable_best() = SampleRecord();
  ExpectBytesRoundTrip(status);
  ExpectJsonRoundTrip(status);
}

TEST(ProtoRoundTrip, WorkerStreamMessages) {
  tuned::v1::WorkerMessage hello;
  hello.mutable_hello()->set_worker_id("host:1:abc");
  hello.mutable_hello()->set_slots(2);
  ExpectBytesRoundTrip(hello);
  ExpectJsonRoundTrip(hello);
  tuned::v1::ServerMessage job;
  job.mutable_job()->set_job_id("j");
  *job.mutable_job()->mutable_trace() = SampleTrace();
  ExpectBytesRoundTrip(job);
  ExpectJsonRoundTrip(job);
}

TEST(ProtoRoundTrip, JsonUsesReadableFieldNames) {
  std::string json;
  ASSERT_TRUE(google::protobuf::util::MessageToJsonString(SampleTrace(), &json).ok());
  EXPECT_NE(json.find("\"sample_perfect_tile\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"intAttrs\""), std::string::npos) << json;
}

TEST(ProtoRoundTrip, GarbageBytesAreRejected) {
  tuned::v1::TuningRecord record;
  EXPECT_FALSE(record.ParseFromString(std::string("\xff\xff\xff\xff\x0f", 5)));
}

}  // namespace

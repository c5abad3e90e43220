// The client library (rpc/) and the remote record source against the real server stack
// (server/stack) listening on loopback: remote and local reads of one log agree, tokens are
// enforced through the shared auth code, errors keep their canonical codes. The log is an SQLite
// file and, where the test server runs, a PostgreSQL schema.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "common/version.h"
#include "compiler/reuse/record_source.h"
#include "compiler/reuse/remote/remote_record_source.h"
#include "rpc/auth.h"
#include "rpc/channel.h"
#include "rpc/credentials.h"
#include "rpc/database_client.h"
#include "rpc/tuning_client.h"
#include "rpc/worker_service_client.h"
#include "proto/task_state.h"
#include "server/stack/embedded_stack.h"
#include "server/stack/server_stack.h"
#include "tests/unit/tuning_db/backend_test_util.h"
#include "tests/unit/tuning_db/db_test_util.h"

namespace tuned {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kToken[] = "s3cret-token";
constexpr char kZen[] = "llvm -mcpu=znver3 -num-cores=2";
constexpr char kSkylake[] = "llvm -mcpu=skylake -num-cores=4";
constexpr char kGpu[] = "cuda -arch=sm_90";

class RpcClientsTest : public ::testing::TestWithParam<db::testing::Backend> {
 protected:
  void SetUp() override {
    TUNED_SKIP_UNLESS_BACKEND(GetParam());
    log_ = std::make_unique<db::testing::ScratchLog>(GetParam());
    db_path_ = log_->location();
  }
  void TearDown() override {
    stack_.reset();
    log_.reset();
  }

  // Starts the real stack on the log written so far, listening on a free loopback port.
  void StartServer(const std::string& token = kToken) {
    server::ServerStackConfig config;
    config.listen = "127.0.0.1:0";
    config.db_path = db_path_;
    config.access.shared = token;
    auto stack = server::ServerStack::Start(config);
    ASSERT_TRUE(stack.ok()) << stack.status().ToString();
    stack_ = std::move(*stack);
  }

  rpc::Connection ClientConnection(const std::string& token = kToken) {
    rpc::ClientConfig config;
    config.channel.address = "127.0.0.1:" + std::to_string(stack_->server().port());
    config.token = token;
    return rpc::Connect(config);
  }

  void Insert(const std::vector<v1::TuningRecord>& records) {
    auto db = db::testing::OpenLogOrFail(db_path_);
    ASSERT_NE(db, nullptr);
    auto inserted = db->InsertRecords(records);
    ASSERT_TRUE(inserted.ok()) << inserted.status().ToString();
  }

  std::unique_ptr<db::testing::ScratchLog> log_;
  std::string db_path_;
  std::unique_ptr<server::ServerStack> stack_;
};

INSTANTIATE_TEST_SUITE_P(Backends, RpcClientsTest, ::testing::ValuesIn(db::testing::AllBackends()),
                         [](const auto& info) { return db::testing::BackendName(info.param); });

// 1100 records of one workload, where the third target appears only after the first 1000 (a
// page of ListRecords would miss it), and a second workload on a fourth target.
TEST_P(RpcClientsTest, RemoteAndLocalTargetsAgreeBeyondAThousandRecords) {
  std::vector<v1::TuningRecord> records;
  for (int64_t seq = 0; seq < 1100; ++seq) {
    const char* target = seq < 1000 ? (seq % 2 == 0 ? kZen : kSkylake) : kGpu;
    records.push_back(db::testing::MakeRecord(64, target, seq, 1e-3 + 1e-6 * double(seq)));
  }
  records.push_back(db::testing::MakeRecord(128, "llvm -mcpu=icelake-server -num-cores=8", 5000,
                                            2e-3));
  Insert(records);
  StartServer();

  auto local = reuse::OpenLocalRecordSource(db_path_);
  ASSERT_TRUE(local.ok()) << local.status().ToString();
  std::unique_ptr<reuse::RecordSource> remote = reuse::OpenRemoteRecordSource(ClientConnection());

  const std::string key = db::testing::MatmulKey(64);
  auto local_targets = (*local)->Targets(key);
  auto remote_targets = remote->Targets(key);
  ASSERT_TRUE(local_targets.ok()) << local_targets.status().ToString();
  ASSERT_TRUE(remote_targets.ok()) << remote_targets.status().ToString();
  EXPECT_THAT(*local_targets, ElementsAre(kGpu, kSkylake, kZen));
  EXPECT_EQ(*remote_targets, *local_targets);

  // Every workload's targets, and a workload without records.
  auto all_local = (*local)->Targets("");
  auto all_remote = remote->Targets("");
  ASSERT_TRUE(all_local.ok() && all_remote.ok());
  EXPECT_EQ(all_local->size(), 4u);
  EXPECT_EQ(*all_remote, *all_local);
  auto none = remote->Targets(db::testing::MatmulKey(7));
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_TRUE(none->empty());

  // Best agrees too: the fastest records of the GPU target are the first ones stored there.
  auto local_best = (*local)->Best(key, kGpu, 3, "", kCodegenVersion, 0);
  auto remote_best = remote->Best(key, kGpu, 3, "", kCodegenVersion, 0);
  ASSERT_TRUE(local_best.ok() && remote_best.ok());
  ASSERT_EQ(remote_best->records.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(remote_best->records[i].record_id(), local_best->records[i].record_id());
    EXPECT_EQ(remote_best->records[i].result().median_seconds(),
              local_best->records[i].result().median_seconds());
  }
  EXPECT_DOUBLE_EQ(remote_best->records[0].result().median_seconds(), 1e-3 + 1e-6 * 1000);
  // A toolkit asked for travels too: these records say none, so they still match.
  auto remote_toolkit = remote->Best(key, kGpu, 3, "LLVM 99.0.0", kCodegenVersion, 0);
  ASSERT_TRUE(remote_toolkit.ok()) << remote_toolkit.status().ToString();
  EXPECT_EQ(remote_toolkit->records.size(), 3u);
  // And a timing protocol: these records predate the field (version 1), so version 2 finds none.
  auto remote_v1 = remote->Best(key, kGpu, 3, "", kCodegenVersion, 1);
  auto remote_v2 = remote->Best(key, kGpu, 3, "", kCodegenVersion, 2);
  ASSERT_TRUE(remote_v1.ok() && remote_v2.ok());
  EXPECT_EQ(remote_v1->records.size(), 3u);
  EXPECT_TRUE(remote_v2->records.empty());
  EXPECT_THAT(remote_v2->miss_reason, HasSubstr("protocol 2"));
}

TEST_P(RpcClientsTest, CallsWithoutTheTokenAreRefused) {
  Insert({db::testing::MakeRecord(64, kZen, 1, 1e-3)});
  StartServer();
  std::unique_ptr<reuse::RecordSource> anonymous =
      reuse::OpenRemoteRecordSource(ClientConnection(/*token=*/""));
  auto targets = anonymous->Targets(db::testing::MatmulKey(64));
  EXPECT_EQ(targets.status().code(), StatusCode::kUnauthenticated);
  EXPECT_THAT(targets.status().message(), HasSubstr("targets from 127.0.0.1:"));

  rpc::DatabaseClient wrong(ClientConnection("not-the-token"));
  EXPECT_EQ(wrong.ListTargets("").status().code(), StatusCode::kUnauthenticated);

  rpc::DatabaseClient right(ClientConnection());
  auto listed = right.ListTargets("");
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  EXPECT_THAT(*listed, ElementsAre(kZen));
  // With the best record comes the count of search trials behind it (what a resumed run spent).
  auto best = right.BestRecords(db::testing::MatmulKey(64), kZen, 1);
  ASSERT_TRUE(best.ok()) << best.status().ToString();
  EXPECT_EQ(best->records_size(), 1);
  EXPECT_EQ(best->trials(), 1u);
}

TEST_P(RpcClientsTest, TuningAndWorkerClientsKeepTheServersCodes) {
  StartServer();
  rpc::TuningClient tuning(ClientConnection());
  v1::TaskSpec bad;
  bad.set_workload_spec("nosuchop(M=1)");
  bad.set_trial_budget(4);
  auto submitted = tuning.Submit(bad, 10000);
  EXPECT_EQ(submitted.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(submitted.status().message(), HasSubstr("submitting the task: "));

  auto missing = tuning.Get("no-such-task");
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound) << missing.status().ToString();

  rpc::WorkerServiceClient workers(ClientConnection());
  auto listed = workers.ListWorkers();
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  EXPECT_EQ(listed->workers_size(), 0);

  rpc::WorkerServiceClient anonymous(ClientConnection(""));
  EXPECT_EQ(anonymous.ListWorkers().status().code(), StatusCode::kUnauthenticated);
}

// The embedded `tuned tune` path: a task through the in-process channel, measured by the local
// worker, followed with Watch until it is final, every trial in the log.
TEST_P(RpcClientsTest, EmbeddedStackRunsATaskToTheEnd) {
  server::EmbeddedStackOptions options;
  options.db_path = db_path_;
  options.engine.worker_id = "embedded-test";
  auto embedded = server::EmbeddedStack::Start(options);
  ASSERT_TRUE(embedded.ok()) << embedded.status().ToString();
  rpc::TuningClient tuning((*embedded)->connection());
  v1::TaskSpec spec;
  spec.set_workload_spec("matmul(M=16,N=16,K=16)");
  spec.set_trial_budget(3);
  spec.mutable_search()->set_strategy("random");
  spec.mutable_target()->set_target((*embedded)->target().target());
  // These count and check the search's records; re-measures have their own tests.
  spec.mutable_remeasure()->set_top_k(0);
  spec.mutable_remeasure()->set_noise_cv_threshold(0);
  auto submitted = tuning.Submit(spec, 10000);
  ASSERT_TRUE(submitted.ok()) << submitted.status().ToString();
  v1::TaskStatus last = *submitted;
  int updates = 0;
  Status watched = tuning.Watch(submitted->task_id(), [&](const v1::TaskStatus& update) {
    last = update;
    ++updates;
  });
  EXPECT_TRUE(watched.ok()) << watched.ToString();
  EXPECT_GT(updates, 0);
  EXPECT_EQ(last.state(), v1::TASK_STATE_SUCCEEDED) << last.error();
  EXPECT_TRUE(v1::IsFinal(last.state()));
  EXPECT_EQ(last.trials_done(), 3u);
  EXPECT_TRUE((*embedded)->Stop().ok());

  auto db = db::testing::OpenLogOrFail(db_path_);
  ASSERT_NE(db, nullptr);
  auto records = db->TaskRecords(submitted->task_id());
  ASSERT_TRUE(records.ok()) << records.status().ToString();
  // A drift of the local worker's calibration may add re-measures: trials are search records.
  std::erase_if(*records, [](const v1::TuningRecord& r) { return r.kind() != v1::RECORD_KIND_SEARCH; });
  EXPECT_EQ(records->size(), 3u);
  for (const v1::TuningRecord& record : *records) {
    EXPECT_EQ(record.result().worker_id(), "embedded-test");
  }
}

// A client that sets only part of the protocol (here: the repeats) still gets verified
// records: every absent field takes its default, verification included.
TEST_P(RpcClientsTest, APartialMeasureConfigFromAClientStillVerifies) {
  server::EmbeddedStackOptions options;
  options.db_path = db_path_;
  options.engine.worker_id = "embedded-test";
  auto embedded = server::EmbeddedStack::Start(options);
  ASSERT_TRUE(embedded.ok()) << embedded.status().ToString();
  rpc::TuningClient tuning((*embedded)->connection());
  v1::TaskSpec spec;
  spec.set_workload_spec("matmul(M=16,N=16,K=16)");
  spec.set_trial_budget(2);
  spec.mutable_search()->set_strategy("random");
  spec.mutable_target()->set_target((*embedded)->target().target());
  // These count and check the search's records; re-measures have their own tests.
  spec.mutable_remeasure()->set_top_k(0);
  spec.mutable_remeasure()->set_noise_cv_threshold(0);
  spec.mutable_measure()->set_repeat(2);
  spec.mutable_measure()->set_min_repeat_ms(0);
  auto submitted = tuning.Submit(spec, 10000);
  ASSERT_TRUE(submitted.ok()) << submitted.status().ToString();
  EXPECT_TRUE(submitted->spec().measure().verify());
  v1::TaskStatus last = *submitted;
  Status watched = tuning.Watch(submitted->task_id(), [&](const v1::TaskStatus& u) { last = u; });
  EXPECT_TRUE(watched.ok()) << watched.ToString();
  EXPECT_EQ(last.state(), v1::TASK_STATE_SUCCEEDED) << last.error();
  EXPECT_TRUE((*embedded)->Stop().ok());

  auto db = db::testing::OpenLogOrFail(db_path_);
  ASSERT_NE(db, nullptr);
  auto records = db->TaskRecords(submitted->task_id());
  ASSERT_TRUE(records.ok());
  std::erase_if(*records, [](const v1::TuningRecord& r) { return r.kind() != v1::RECORD_KIND_SEARCH; });
  ASSERT_EQ(records->size(), 2u);
  int ok = 0;
  for (const v1::TuningRecord& record : *records) {
    EXPECT_TRUE(record.config().has_verify() && record.config().verify());
    EXPECT_EQ(record.config().repeat(), 2u);
    if (record.result().status() != v1::MEASURE_STATUS_OK) continue;
    ++ok;
    EXPECT_GT(record.result().max_error(), 0);  // the output was compared with the reference
    EXPECT_EQ(record.result().repeat_seconds_size(), 2);
  }
  EXPECT_GT(ok, 0);
  auto best = db->GetBestRecords({records->front().workload().key(),
                                  (*embedded)->target().target(), "", 1});
  ASSERT_TRUE(best.ok());
  EXPECT_EQ(best->records.size(), 1u) << best->miss_reason;  // verified, so it ranks
}

TEST(RpcAuthTest, TokenMatchesOnlyTheWholeToken) {
  EXPECT_TRUE(rpc::TokenMatches("Bearer abc", "abc"));
  EXPECT_TRUE(rpc::TokenMatches("abc", "abc"));
  EXPECT_FALSE(rpc::TokenMatches("Bearer ab", "abc"));
  EXPECT_FALSE(rpc::TokenMatches("Bearer abcd", "abc"));
  EXPECT_FALSE(rpc::TokenMatches("Bearer abd", "abc"));
  EXPECT_FALSE(rpc::TokenMatches("", "abc"));
}

TEST(RpcCredentialsTest, TokenFilesAreTrimmedAndEmptyOnesRefused) {
  db::testing::TempDir dir;
  db::testing::WriteFile(dir.File("token"), "  tok3n \n");
  // Readable by others: refused, naming the file and its mode.
  auto readable = rpc::ReadTokenFile(dir.File("token"));
  EXPECT_EQ(readable.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(readable.status().message(), HasSubstr("is accessible by all users"));
  std::filesystem::permissions(dir.File("token"), std::filesystem::perms::owner_read);
  auto token = rpc::ReadTokenFile(dir.File("token"));
  ASSERT_TRUE(token.ok()) << token.status().ToString();
  EXPECT_EQ(*token, "tok3n");
  db::testing::WriteFile(dir.File("empty"), " \n");
  std::filesystem::permissions(dir.File("empty"), std::filesystem::perms::owner_read);
  EXPECT_EQ(rpc::ReadTokenFile(dir.File("empty")).status().code(), StatusCode::kInvalidArgument);
  auto missing = rpc::LoadClientConfig("h:1", "", false, dir.File("no-such-ca.pem"));
  EXPECT_EQ(missing.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(missing.status().message(), HasSubstr("no-such-ca.pem"));
}

}  // namespace
}  // namespace tuned

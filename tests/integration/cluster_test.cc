// Real `tuned serve` and `tuned-worker` processes on loopback: a task completes with every
// trial recorded once, also when a worker or the server is killed with SIGKILL in the middle;
// wrong tokens, workers of other targets and malformed messages are refused.

#include "tests/integration/cluster.h"

#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <signal.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <thread>

#include "proto/task_state.h"
#include "tests/unit/tuning_db/backend_test_util.h"
#include "tuning_db/database.h"

namespace tuned::testing {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr auto kTaskTimeout = std::chrono::seconds(120);

// TLS end to end: a server with a self-signed certificate for 127.0.0.1, a worker and a client
// that check it; a plaintext client cannot talk to it.
TEST(ClusterTlsTest, WorkerAndClientTalkToServerOverTls) {
  Cluster cluster;
  const std::string cert = cluster.dir() + "/cert.pem";
  const std::string key = cluster.dir() + "/key.pem";
  const std::string command =
      "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=localhost"
      " -addext subjectAltName=IP:127.0.0.1 -keyout " +
      key + " -out " + cert + " 2>/dev/null";
  if (std::system(command.c_str()) != 0) GTEST_SKIP() << "openssl cannot make a certificate here";
  cluster.set_server_args({"--tls-cert", cert, "--tls-key", key});
  std::string error;
  ASSERT_TRUE(cluster.StartServer(&error)) << error;
  cluster.StartWorker("tls-worker", {"--tls-ca", cert});

  std::string out;
  ASSERT_EQ(
      cluster.RunTuned({"tune", "--server", cluster.address(), "--token-file", cluster.token_file(),
                        "--tls-ca", cert, "--workload", "matmul(M=32,N=32,K=32)", "--trials", "4",
                        "--repeat", "1", "--min-repeat-ms", "0", "--json"},
                       &out),
      0)
      << out << cluster.server().Log();
  EXPECT_THAT(out, HasSubstr("\"trials_done\": 4"));
  ASSERT_EQ(cluster.RunTuned({"workers", "--server", cluster.address(), "--token-file",
                              cluster.token_file(), "--tls-ca", cert},
                             &out),
            0)
      << out;
  EXPECT_THAT(out, HasSubstr("tls-worker"));

  // Plaintext against the TLS port fails.
  auto stub = cluster.Tuning();
  auto context = cluster.Context();
  context->set_deadline(std::chrono::system_clock::now() + 2s);
  v1::ListTasksResponse tasks;
  EXPECT_FALSE(stub->ListTasks(context.get(), v1::ListTasksRequest(), &tasks).ok());
}

class ClusterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    ASSERT_TRUE(cluster_.StartServer(&error)) << error;
  }

  std::string Logs() { return "server log:\n" + cluster_.server().Log(); }

  Cluster cluster_;
};

// The tests whose point is the log run on every backend: the server's --db is an SQLite file
// or a fresh schema on the PostgreSQL test server.
class ClusterOnBackend : public ::testing::TestWithParam<db::testing::Backend> {
 protected:
  void SetUp() override {
    TUNED_SKIP_UNLESS_BACKEND(GetParam());
    if (GetParam() == db::testing::Backend::kPostgres) {
      log_ = std::make_unique<db::testing::ScratchLog>(GetParam());
      cluster_.set_db_path(log_->location());
    }
    std::string error;
    ASSERT_TRUE(cluster_.StartServer(&error)) << error;
  }

  std::string Logs() { return "server log:\n" + cluster_.server().Log(); }

  std::unique_ptr<db::testing::ScratchLog> log_;  // Dropped after the cluster has stopped.
  Cluster cluster_;
};

INSTANTIATE_TEST_SUITE_P(Backends, ClusterOnBackend,
                         ::testing::ValuesIn(db::testing::AllBackends()),
                         [](const auto& info) { return db::testing::BackendName(info.param); });

TEST_P(ClusterOnBackend, TaskOf64TrialsRecordsEveryTrialOnce) {
  cluster_.StartWorker("w1");
  cluster_.StartWorker("w2");
  ASSERT_TRUE(cluster_.WaitWorkers(2, 60s)) << Logs();

  std::string out;
  int code = cluster_.RunTuned(
      {"tune", "--server", cluster_.address(), "--token-file", cluster_.token_file(), "--workload",
       "matmul(M=32,N=32,K=32)", "--trials", "64", "--repeat", "1", "--min-repeat-ms", "0",
       "--batch-size", "8", "--json"},
      &out);
  ASSERT_EQ(code, 0) << out << Logs();
  EXPECT_THAT(out, HasSubstr("\"state\": \"SUCCEEDED\""));
  EXPECT_THAT(out, HasSubstr("\"trials_done\": 64"));

  auto stub = cluster_.Tuning();
  auto context = cluster_.Context();
  v1::ListTasksResponse tasks;
  ASSERT_TRUE(stub->ListTasks(context.get(), v1::ListTasksRequest(), &tasks).ok());
  ASSERT_EQ(tasks.tasks_size(), 1);
  EXPECT_EQ(tasks.tasks(0).state(), v1::TASK_STATE_SUCCEEDED);
  auto records = ExpectEachTrialOnce(cluster_, tasks.tasks(0).task_id(), 64);
  std::set<std::string> workers;
  for (const auto& record : records) workers.insert(record.result().worker_id());
  EXPECT_TRUE(workers.contains("w1") || workers.contains("w2"));

  // `tuned workers` lists both, with their completed jobs.
  ASSERT_EQ(
      cluster_.RunTuned(
          {"workers", "--server", cluster_.address(), "--token-file", cluster_.token_file()}, &out),
      0)
      << out;
  EXPECT_THAT(out, HasSubstr("2 worker(s)"));
  EXPECT_THAT(out, HasSubstr("w1"));
  EXPECT_THAT(out, HasSubstr("w2"));
}

TEST_F(ClusterTest, WorkerKilledMidTaskStillCompletesWithEveryTrialOnce) {
  ChildProcess& victim = cluster_.StartWorker("victim");
  cluster_.StartWorker("survivor");
  ASSERT_TRUE(cluster_.WaitWorkers(2, 60s)) << Logs();
  std::string task_id = SubmitTask(cluster_, Cluster::SmallTask(64));
  ASSERT_FALSE(task_id.empty());

  v1::TaskStatus status;
  ASSERT_TRUE(cluster_.WaitTask(
      task_id, [](const auto& s) { return s.trials_done() >= 8; }, kTaskTimeout, &status))
      << Logs();
  victim.Signal(SIGKILL);
  ASSERT_TRUE(victim.Wait(10s).has_value());

  ASSERT_TRUE(cluster_.WaitTask(
      task_id, [](const auto& s) { return v1::IsFinal(s.state()); }, kTaskTimeout, &status))
      << Logs();
  EXPECT_EQ(status.state(), v1::TASK_STATE_SUCCEEDED) << status.error();
  EXPECT_EQ(status.trials_done(), 64u);
  ExpectEachTrialOnce(cluster_, task_id, 64);
  EXPECT_THAT(cluster_.server().Log(), HasSubstr("worker left worker=victim"));
}

TEST_F(ClusterTest, WorkerStoppedBySigtermDrainsWithoutHandingJobsBack) {
  ChildProcess& leaving = cluster_.StartWorker("leaving", {"--slots", "2"});
  cluster_.StartWorker("staying");
  ASSERT_TRUE(cluster_.WaitWorkers(2, 60s)) << Logs();
  std::string task_id = SubmitTask(cluster_, Cluster::SmallTask(32));
  ASSERT_FALSE(task_id.empty());

  v1::TaskStatus status;
  ASSERT_TRUE(cluster_.WaitTask(
      task_id, [](const auto& s) { return s.trials_done() >= 8; }, kTaskTimeout, &status))
      << Logs();
  leaving.Signal(SIGTERM);
  std::optional<int> code = leaving.Wait(30s);
  ASSERT_TRUE(code.has_value()) << "a draining worker did not exit";
  EXPECT_EQ(*code, 0) << leaving.Log();
  EXPECT_THAT(leaving.Log(), HasSubstr("worker drained worker=leaving jobs_handed_back=0"));
  EXPECT_THAT(cluster_.server().Log(), HasSubstr("worker draining worker=leaving"));

  ASSERT_TRUE(cluster_.WaitTask(
      task_id, [](const auto& s) { return v1::IsFinal(s.state()); }, kTaskTimeout, &status))
      << Logs();
  EXPECT_EQ(status.state(), v1::TASK_STATE_SUCCEEDED) << status.error();
  ExpectEachTrialOnce(cluster_, task_id, 32);
  // It reported everything it held: nothing was requeued because of it.
  EXPECT_THAT(cluster_.server().Log(), Not(HasSubstr("reason='worker 'leaving'")));
}

TEST_P(ClusterOnBackend, ServerKilledMidTaskResumesAfterRestartWithoutLosingRecords) {
  cluster_.StartWorker("w1", {"--slots", "2"});
  ASSERT_TRUE(cluster_.WaitWorkers(1, 60s)) << Logs();
  std::string task_id = SubmitTask(cluster_, Cluster::SmallTask(64));
  ASSERT_FALSE(task_id.empty());

  v1::TaskStatus status;
  ASSERT_TRUE(cluster_.WaitTask(
      task_id, [](const auto& s) { return s.trials_done() >= 16; }, kTaskTimeout, &status))
      << Logs();
  // What the server has acknowledged: the records it lists for the task.
  std::map<int64_t, std::string> acknowledged;
  {
    auto stub = cluster_.Database();
    auto context = cluster_.Context();
    v1::ListRecordsRequest request;
    request.set_task_id(task_id);
    request.set_limit(1000);
    v1::ListRecordsResponse response;
    ASSERT_TRUE(stub->ListRecords(context.get(), request, &response).ok());
    for (const auto& record : response.records()) {
      acknowledged[record.record_id()] = record.trace_hash();
    }
  }
  ASSERT_GE(acknowledged.size(), 16u);
  cluster_.server().Signal(SIGKILL);
  ASSERT_TRUE(cluster_.server().Wait(10s).has_value());

  std::string error;
  ASSERT_TRUE(cluster_.StartServer(&error)) << error;
  ASSERT_TRUE(cluster_.WaitTask(
      task_id, [](const auto& s) { return v1::IsFinal(s.state()); }, kTaskTimeout, &status))
      << Logs();
  EXPECT_EQ(status.state(), v1::TASK_STATE_SUCCEEDED) << status.error();
  EXPECT_EQ(status.trials_done(), 64u);
  auto records = ExpectEachTrialOnce(cluster_, task_id, 64);
  std::map<int64_t, std::string> stored;
  for (const auto& record : records) stored[record.record_id()] = record.trace_hash();
  for (const auto& [id, hash] : acknowledged) {
    ASSERT_TRUE(stored.contains(id)) << "acknowledged record " << id << " was lost";
    EXPECT_EQ(stored[id], hash);
  }
  EXPECT_THAT(cluster_.server().Log(), HasSubstr("task resumed task=" + task_id));
}

TEST_F(ClusterTest, WrongTokenIsRefused) {
  // A worker with the wrong token exits with the server's refusal instead of retrying.
  const std::string bad_token = cluster_.WriteSecret("bad-token", "not-the-token\n");
  ChildProcess worker({TUNED_WORKER_BINARY, "--server", cluster_.address(), "--token-file",
                       bad_token, "--id", "intruder"},
                      cluster_.dir() + "/intruder.log");
  std::optional<int> code = worker.Wait(60s);
  ASSERT_TRUE(code.has_value()) << "worker with a wrong token kept running";
  EXPECT_EQ(*code, 1);
  EXPECT_THAT(worker.Log(), HasSubstr("invalid token"));

  // Clients: wrong and missing tokens.
  auto stub = cluster_.Tuning();
  v1::SubmitTaskRequest request;
  *request.mutable_spec() = Cluster::SmallTask(4);
  v1::SubmitTaskResponse response;
  auto wrong = cluster_.Context("wrong");
  EXPECT_EQ(stub->SubmitTask(wrong.get(), request, &response).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  grpc::ClientContext missing;
  missing.set_deadline(std::chrono::system_clock::now() + 10s);
  EXPECT_EQ(stub->SubmitTask(&missing, request, &response).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  auto db_stub = cluster_.Database();
  auto db_context = cluster_.Context("wrong");
  v1::ListRecordsResponse records;
  EXPECT_EQ(db_stub->ListRecords(db_context.get(), v1::ListRecordsRequest(), &records).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);

  std::string out;
  EXPECT_EQ(cluster_.RunTuned({"tune", "--server", cluster_.address(), "--token-file", bad_token,
                               "--workload", "matmul(M=32,N=32,K=32)", "--trials", "4"},
                              &out),
            1);
  EXPECT_THAT(out, HasSubstr("invalid token"));
  EXPECT_TRUE(cluster_.WaitWorkers(0, 1s));
  auto list_context = cluster_.Context();
  v1::ListWorkersResponse workers;
  ASSERT_TRUE(cluster_.Workers()->ListWorkers(list_context.get(), {}, &workers).ok());
  EXPECT_EQ(workers.workers_size(), 0);
}

TEST_F(ClusterTest, WorkerAnnouncingAnotherTargetGetsNoJobs) {
  cluster_.StartWorker("real");
  ASSERT_TRUE(cluster_.WaitWorkers(1, 60s)) << Logs();
  auto list_context = cluster_.Context();
  v1::ListWorkersResponse workers;
  ASSERT_TRUE(cluster_.Workers()->ListWorkers(list_context.get(), {}, &workers).ok());
  ASSERT_EQ(workers.workers_size(), 1);
  const std::string real_target = workers.workers(0).hello().target().target();

  // A hand-driven worker for another target, with free slots and regular heartbeats.
  auto stub = cluster_.Workers();
  auto context = cluster_.Context();
  context->set_deadline(std::chrono::system_clock::now() + 300s);
  auto stream = stub->Connect(context.get());
  v1::WorkerMessage hello;
  hello.mutable_hello()->set_worker_id("other-target");
  hello.mutable_hello()->mutable_target()->set_target("llvm -mcpu=generic-other -num-cores=1");
  hello.mutable_hello()->set_slots(8);
  ASSERT_TRUE(stream->Write(hello));
  ASSERT_TRUE(cluster_.WaitWorkers(2, 30s));

  v1::TaskSpec spec = Cluster::SmallTask(16);
  spec.mutable_target()->set_target(real_target);
  std::string task_id = SubmitTask(cluster_, spec);
  ASSERT_FALSE(task_id.empty());
  v1::TaskStatus status;
  bool finished = false;
  for (int i = 0; i < 1200 && !finished; ++i) {  // Heartbeats every 100 ms while waiting.
    v1::WorkerMessage beat;
    beat.mutable_heartbeat();
    stream->Write(beat);
    finished = cluster_.WaitTask(
                   task_id, [](const auto& s) { return v1::IsFinal(s.state()); }, 0s, &status) ||
               v1::IsFinal(status.state());
    std::this_thread::sleep_for(100ms);
  }
  ASSERT_TRUE(finished) << Logs();
  EXPECT_EQ(status.state(), v1::TASK_STATE_SUCCEEDED);
  ExpectEachTrialOnce(cluster_, task_id, 16);

  list_context = cluster_.Context();
  ASSERT_TRUE(cluster_.Workers()->ListWorkers(list_context.get(), {}, &workers).ok());
  for (const auto& worker : workers.workers()) {
    if (worker.hello().worker_id() == "other-target") {
      EXPECT_EQ(worker.jobs_assigned(), 0u);
    }
  }
  // Everything the server sent the other-target worker: the heartbeat interval, no job.
  stream->WritesDone();
  v1::ServerMessage message;
  int received = 0;
  while (stream->Read(&message)) {
    ++received;
    EXPECT_FALSE(message.has_job()) << "a job went to a worker of another target";
  }
  EXPECT_EQ(received, 1);
  stream->Finish();
}

TEST_F(ClusterTest, MalformedMessagesGetInvalidArgument) {
  auto tuning = cluster_.Tuning();
  auto submit = [&](const v1::TaskSpec& spec) {
    auto context = cluster_.Context();
    v1::SubmitTaskRequest request;
    *request.mutable_spec() = spec;
    v1::SubmitTaskResponse response;
    return tuning->SubmitTask(context.get(), request, &response);
  };
  v1::TaskSpec bad_workload = Cluster::SmallTask(4);
  bad_workload.set_workload_spec("matmul(M=0,N=4");
  grpc::Status status = submit(bad_workload);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("workload spec 'matmul(M=0,N=4'"));

  v1::TaskSpec no_budget = Cluster::SmallTask(0);
  status = submit(no_budget);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("trial_budget"));

  v1::TaskSpec bad_target = Cluster::SmallTask(4);
  bad_target.mutable_target()->set_target("llvm -mcpu=no-such-cpu");
  EXPECT_EQ(submit(bad_target).error_code(), grpc::StatusCode::INVALID_ARGUMENT);

  v1::TaskSpec bad_measure = Cluster::SmallTask(4);
  bad_measure.mutable_measure()->set_min_repeat_ms(std::numeric_limits<double>::quiet_NaN());
  EXPECT_EQ(submit(bad_measure).error_code(), grpc::StatusCode::INVALID_ARGUMENT);

  // Worker streams: each malformed message ends its stream with INVALID_ARGUMENT.
  auto workers = cluster_.Workers();
  auto run_stream = [&](std::vector<v1::WorkerMessage> messages) {
    auto context = cluster_.Context();
    auto stream = workers->Connect(context.get());
    for (const auto& message : messages) stream->Write(message);
    v1::ServerMessage ignored;
    while (stream->Read(&ignored)) {
    }
    return stream->Finish();
  };
  v1::WorkerMessage result_first;
  result_first.mutable_result()->set_job_id("j");
  result_first.mutable_result()->set_status(v1::MEASURE_STATUS_OK);
  status = run_stream({result_first});
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("before its hello"));

  status = run_stream({v1::WorkerMessage()});
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("empty worker message"));

  v1::WorkerMessage no_slots;
  no_slots.mutable_hello()->set_worker_id("w");
  no_slots.mutable_hello()->mutable_target()->set_target("llvm");
  status = run_stream({no_slots});
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("slots"));

  v1::WorkerMessage hello = no_slots;
  hello.mutable_hello()->set_slots(1);
  v1::WorkerMessage nan_result;
  nan_result.mutable_result()->set_job_id("j");
  nan_result.mutable_result()->set_status(v1::MEASURE_STATUS_OK);
  nan_result.mutable_result()->add_repeat_seconds(std::nan(""));
  status = run_stream({hello, nan_result});
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("finite"));

  // The server is still serving.
  auto context = cluster_.Context();
  v1::GetTaskRequest unknown;
  unknown.set_task_id("no-such-task");
  v1::TaskStatus ignored;
  EXPECT_EQ(tuning->GetTask(context.get(), unknown, &ignored).error_code(),
            grpc::StatusCode::NOT_FOUND);
  EXPECT_TRUE(cluster_.server().running());
}

nlohmann::json CompileJson(Cluster& cluster, std::vector<std::string> source_args, const std::string& out_name) {
  std::vector<std::string> args = {"compile", "--workload", "matmul(M=32,N=32,K=32)", "-o",
                                   cluster.dir() + "/" + out_name, "--json"};
  args.insert(args.end(), source_args.begin(), source_args.end());
  std::string out;
  int code = cluster.RunTuned(args, &out);
  EXPECT_EQ(code, 0) << out;
  size_t brace = out.find('{');
  return brace == std::string::npos ? nlohmann::json() : nlohmann::json::parse(out.substr(brace), nullptr, false);
}

// A compiler on another machine reads the server's log through DatabaseService and builds the
// same kernel as one reading the database file.
TEST_P(ClusterOnBackend, RemoteCompileUsesTheSameRecordAsTheLocalLog) {
  cluster_.StartWorker("w1");
  ASSERT_TRUE(cluster_.WaitWorkers(1, 60s)) << Logs();
  std::string out;
  ASSERT_EQ(cluster_.RunTuned({"tune", "--server", cluster_.address(), "--token-file",
                               cluster_.token_file(), "--workload", "matmul(M=32,N=32,K=32)",
                               "--trials", "8", "--repeat", "1", "--min-repeat-ms", "0",
                               "--batch-size", "8", "--json"},
                              &out),
            0)
      << out << Logs();
  nlohmann::json remote = CompileJson(
      cluster_, {"--server", cluster_.address(), "--token-file", cluster_.token_file()}, "remote.o");
  nlohmann::json local = CompileJson(cluster_, {"--db", cluster_.db_path()}, "local.o");
  ASSERT_TRUE(remote.is_object() && local.is_object());
  EXPECT_TRUE(remote["from_record"].get<bool>()) << remote.dump();
  EXPECT_EQ(remote["record_id"], local["record_id"]);
  EXPECT_EQ(remote["trace_hash"], local["trace_hash"]);
  EXPECT_FALSE(remote["trace_hash"].get<std::string>().empty());
  EXPECT_TRUE(std::filesystem::exists(cluster_.dir() + "/remote.h"));

  // Without the token the server refuses, and compile says so (exit 1: not bad input).
  std::string refused;
  EXPECT_NE(cluster_.RunTuned({"compile", "--workload", "matmul(M=32,N=32,K=32)", "--server",
                               cluster_.address(), "-o", cluster_.dir() + "/x.o"},
                              &refused),
            0);
}


// Two servers on one PostgreSQL database, each with its own worker and its own task. One
// server is killed with SIGKILL mid-task; the other takes its task over (its session's locks
// went with it) and finishes both tasks from the records: every record acknowledged before the
// kill is kept, and no trace of a workload is recorded twice in the whole log.
class TwoServersOnOneLog : public ::testing::TestWithParam<db::testing::Backend> {};

INSTANTIATE_TEST_SUITE_P(SharedLogBackends, TwoServersOnOneLog,
                         ::testing::Values(db::testing::Backend::kPostgres),
                         [](const auto& info) { return db::testing::BackendName(info.param); });

TEST_P(TwoServersOnOneLog, SurvivorTakesOverTheTaskOfAKilledServer) {
  TUNED_SKIP_UNLESS_BACKEND(GetParam());
  db::testing::ScratchLog log(GetParam());
  Cluster doomed;
  Cluster survivor;
  doomed.set_db_path(log.location());
  survivor.set_db_path(log.location());
  std::string error;
  ASSERT_TRUE(doomed.StartServer(&error)) << error;
  ASSERT_TRUE(survivor.StartServer(&error)) << error;
  auto logs = [&] {
    return "doomed server:\n" + doomed.server().Log() + "\nsurvivor:\n" + survivor.server().Log();
  };
  doomed.StartWorker("doomed-worker", {"--slots", "2"});
  survivor.StartWorker("survivor-worker", {"--slots", "2"});
  ASSERT_TRUE(doomed.WaitWorkers(1, 60s)) << logs();
  ASSERT_TRUE(survivor.WaitWorkers(1, 60s)) << logs();

  // Different workloads, so that a trace hash recorded twice in the log is a double measurement.
  constexpr uint32_t kTrials = 40;
  v1::TaskSpec orphan_spec = Cluster::SmallTask(kTrials);
  v1::TaskSpec own_spec = Cluster::SmallTask(kTrials);
  own_spec.set_workload_spec("matmul(M=32,N=48,K=32)");
  const std::string orphan = SubmitTask(doomed, orphan_spec);
  const std::string own = SubmitTask(survivor, own_spec);
  ASSERT_FALSE(orphan.empty());
  ASSERT_FALSE(own.empty());

  v1::TaskStatus status;
  ASSERT_TRUE(doomed.WaitTask(
      orphan, [](const auto& s) { return s.trials_done() >= 12; }, kTaskTimeout, &status))
      << logs();
  ASSERT_FALSE(v1::IsFinal(status.state()));
  std::map<int64_t, std::string> acknowledged;
  {
    auto stub = doomed.Database();
    auto context = doomed.Context();
    v1::ListRecordsRequest request;
    request.set_task_id(orphan);
    request.set_limit(1000);
    v1::ListRecordsResponse response;
    ASSERT_TRUE(stub->ListRecords(context.get(), request, &response).ok());
    for (const auto& record : response.records()) {
      acknowledged[record.record_id()] = record.trace_hash();
    }
  }
  ASSERT_GE(acknowledged.size(), 12u);
  doomed.server().Signal(SIGKILL);
  ASSERT_TRUE(doomed.server().Wait(10s).has_value());

  for (const std::string& task_id : {orphan, own}) {
    ASSERT_TRUE(survivor.WaitTask(
        task_id, [](const auto& s) { return v1::IsFinal(s.state()); }, kTaskTimeout, &status))
        << logs();
    EXPECT_EQ(status.state(), v1::TASK_STATE_SUCCEEDED) << status.error();
    EXPECT_EQ(status.trials_done(), kTrials);
  }
  EXPECT_THAT(survivor.server().Log(), HasSubstr("task taken over task=" + orphan)) << logs();
  auto records = ExpectEachTrialOnce(survivor, orphan, kTrials);
  ExpectEachTrialOnce(survivor, own, kTrials);
  std::map<int64_t, std::string> stored;
  for (const auto& record : records) stored[record.record_id()] = record.trace_hash();
  for (const auto& [id, hash] : acknowledged) {
    ASSERT_TRUE(stored.contains(id)) << "acknowledged record " << id << " was lost";
    EXPECT_EQ(stored[id], hash);
  }

  // The whole log: one record per (workload, trace hash), and only the two tasks' records.
  auto database = OpenDb(survivor);
  ASSERT_NE(database, nullptr);
  std::map<std::pair<std::string, std::string>, int> per_trace;
  db::RecordFilter filter;
  for (bool more = true; more;) {
    auto page = database->ListRecords(filter);
    ASSERT_TRUE(page.ok()) << page.status().ToString();
    for (const auto& record : *page) {
      filter.after_id = record.record_id();
      // Trials: re-measures of a trace (noise, drift, the final top-k) are its own records.
      if (record.kind() != v1::RECORD_KIND_SEARCH) continue;
      ++per_trace[{record.workload().key(), record.trace_hash()}];
    }
    more = page->size() == size_t(filter.limit);
  }
  EXPECT_EQ(per_trace.size(), 2 * kTrials);
  for (const auto& [key, count] : per_trace) {
    EXPECT_EQ(count, 1) << "trace " << key.second << " of " << key.first << " recorded " << count
                        << " times";
  }
}

}  // namespace
}  // namespace tuned::testing

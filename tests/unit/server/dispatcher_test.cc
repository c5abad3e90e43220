// The dispatcher alone, with fake worker connections and an injected clock: leases,
// heartbeats, requeue, bounded retries, idempotent results, target matching, fair sharing,
// draining.

#include "server/dispatch/dispatcher.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace tuned::dispatch {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

class FakeConnection : public WorkerConnection {
 public:
  void SendJob(const v1::MeasureJob& job) override { jobs.push_back(job); }
  void SendCancel(const std::string& job_id) override { cancels.push_back(job_id); }
  void Close(const Status& reason) override { closed = reason; }

  std::vector<std::string> JobIds() const {
    std::vector<std::string> ids;
    for (const auto& job : jobs) ids.push_back(job.job_id());
    return ids;
  }

  std::vector<v1::MeasureJob> jobs;
  std::vector<std::string> cancels;
  std::optional<Status> closed;
};

constexpr char kCpu[] = "llvm -mcpu=znver3 -num-cores=2";
constexpr char kOtherCpu[] = "llvm -mcpu=generic -num-cores=1";

class DispatcherTest : public ::testing::Test {
 protected:
  DispatcherTest() : dispatcher_(MakeOptions()) {}

  DispatcherOptions MakeOptions() {
    DispatcherOptions options;
    options.heartbeat_interval_ms = 100;
    options.lease_timeout_ms = 1000;
    options.max_attempts = 2;
    options.now_ms = [this] { return now_ms_; };
    return options;
  }

  uint64_t Connect(const std::string& worker_id, const std::string& target, uint32_t slots,
                   FakeConnection* connection) {
    v1::WorkerHello hello;
    hello.set_worker_id(worker_id);
    hello.mutable_target()->set_target(target);
    hello.set_slots(slots);
    auto session = dispatcher_.RegisterWorker(hello, "test", connection);
    EXPECT_TRUE(session.ok()) << session.status().ToString();
    return session.ok() ? *session : 0;
  }

  void Submit(const std::string& job_id, const std::string& task_id,
              const std::string& target = kCpu) {
    v1::MeasureJob job;
    job.set_job_id(job_id);
    job.set_task_id(task_id);
    job.mutable_target()->set_target(target);
    Status status = dispatcher_.Submit(
        job, [this](const v1::MeasureResult& result) { results_.push_back(result); });
    ASSERT_TRUE(status.ok()) << status.ToString();
  }

  static v1::MeasureResult Ok(const std::string& job_id) {
    v1::MeasureResult result;
    result.set_job_id(job_id);
    result.set_status(v1::MEASURE_STATUS_OK);
    result.set_median_seconds(1e-3);
    result.add_repeat_seconds(1e-3);
    return result;
  }

  static v1::Heartbeat Beat(std::vector<std::string> ids) {
    v1::Heartbeat heartbeat;
    for (const auto& id : ids) heartbeat.add_running_job_ids(id);
    return heartbeat;
  }

  int64_t now_ms_ = 0;
  std::vector<v1::MeasureResult> results_;
  Dispatcher dispatcher_;
};

TEST_F(DispatcherTest, GivesJobsOnlyToWorkersOfTheAnnouncedTarget) {
  FakeConnection other;
  FakeConnection same;
  Connect("other", kOtherCpu, 4, &other);
  Submit("j1", "t1");
  Submit("j2", "t1");
  EXPECT_THAT(other.jobs, IsEmpty());
  Connect("same", kCpu, 4, &same);
  EXPECT_THAT(same.JobIds(), ElementsAre("j1", "j2"));
  EXPECT_THAT(other.jobs, IsEmpty());
}

TEST_F(DispatcherTest, NeverLeasesMoreJobsThanSlots) {
  FakeConnection worker;
  uint64_t session = Connect("w", kCpu, 2, &worker);
  for (int i = 0; i < 5; ++i) Submit("j" + std::to_string(i), "t");
  EXPECT_THAT(worker.JobIds(), ElementsAre("j0", "j1"));
  EXPECT_TRUE(dispatcher_.HandleResult(session, Ok("j0")));
  EXPECT_THAT(worker.JobIds(), ElementsAre("j0", "j1", "j2"));
  EXPECT_EQ(dispatcher_.Stats().queued, 2);
  EXPECT_EQ(dispatcher_.Stats().leased, 2);
}

TEST_F(DispatcherTest, ResultCompletesJobOnceAndIgnoresDuplicates) {
  FakeConnection worker;
  uint64_t session = Connect("w", kCpu, 1, &worker);
  Submit("j1", "t");
  EXPECT_TRUE(dispatcher_.HandleResult(session, Ok("j1")));
  EXPECT_FALSE(dispatcher_.HandleResult(session, Ok("j1")));
  ASSERT_EQ(results_.size(), 1u);
  EXPECT_EQ(results_[0].worker_id(), "w");
  EXPECT_EQ(dispatcher_.Stats().duplicates, 1);
}

TEST_F(DispatcherTest, IgnoresResultFromWorkerThatNeverHeldTheJob) {
  FakeConnection holder;
  FakeConnection stranger;
  Connect("holder", kCpu, 1, &holder);
  Submit("j1", "t");
  uint64_t other = Connect("stranger", kCpu, 1, &stranger);
  EXPECT_FALSE(dispatcher_.HandleResult(other, Ok("j1")));
  EXPECT_THAT(results_, IsEmpty());
}

TEST_F(DispatcherTest, DrainingWorkerGetsNoNewJobsAndReportsTheOnesItHolds) {
  FakeConnection leaving;
  FakeConnection staying;
  uint64_t a = Connect("leaving", kCpu, 2, &leaving);
  Submit("j1", "t");
  Submit("j2", "t");
  ASSERT_THAT(leaving.JobIds(), ElementsAre("j1", "j2"));
  dispatcher_.HandleDrain(a, "signal 15");
  EXPECT_TRUE(dispatcher_.ListWorkers().at(0).draining);
  // Its results still count; its freed slots are not refilled.
  EXPECT_TRUE(dispatcher_.HandleResult(a, Ok("j1")));
  Submit("j3", "t");
  EXPECT_THAT(leaving.JobIds(), ElementsAre("j1", "j2"));
  EXPECT_EQ(dispatcher_.Stats().queued, 1);
  // Another worker takes the queue; the one still held goes there when the stream ends.
  Connect("staying", kCpu, 2, &staying);
  EXPECT_THAT(staying.JobIds(), ElementsAre("j3"));
  dispatcher_.UnregisterWorker(a, "drained");
  EXPECT_THAT(staying.JobIds(), ElementsAre("j3", "j2"));
  ASSERT_EQ(results_.size(), 1u);
  EXPECT_EQ(results_[0].job_id(), "j1");
}

TEST_F(DispatcherTest, DroppedStreamRequeuesLeasesToAnotherWorker) {
  FakeConnection first;
  FakeConnection second;
  uint64_t a = Connect("a", kCpu, 1, &first);
  Submit("j1", "t");
  ASSERT_THAT(first.JobIds(), ElementsAre("j1"));
  Connect("b", kCpu, 1, &second);
  dispatcher_.UnregisterWorker(a, "stream closed");
  ASSERT_THAT(second.JobIds(), ElementsAre("j1"));
  EXPECT_EQ(second.jobs[0].attempt(), 1u);
  EXPECT_EQ(dispatcher_.Stats().requeued, 1);
}

TEST_F(DispatcherTest, SilentWorkerIsDroppedAndItsJobsRequeued) {
  FakeConnection silent;
  FakeConnection alive;
  Connect("silent", kCpu, 1, &silent);
  Submit("j1", "t");
  uint64_t b = Connect("alive", kCpu, 1, &alive);
  now_ms_ = 900;
  dispatcher_.HandleHeartbeat(b, Beat({}));
  now_ms_ = 1500;
  dispatcher_.CheckLeases();
  ASSERT_TRUE(silent.closed.has_value());
  EXPECT_EQ(silent.closed->code(), StatusCode::kUnavailable);
  EXPECT_THAT(silent.closed->message(), HasSubstr("missed heartbeats"));
  EXPECT_FALSE(alive.closed.has_value());
  EXPECT_THAT(alive.JobIds(), ElementsAre("j1"));
  EXPECT_EQ(dispatcher_.Stats().workers, 1);
}

TEST_F(DispatcherTest, HeartbeatRenewsLeases) {
  FakeConnection worker;
  uint64_t session = Connect("w", kCpu, 1, &worker);
  Submit("j1", "t");
  for (int step = 1; step <= 10; ++step) {
    now_ms_ = step * 500;
    dispatcher_.HandleHeartbeat(session, Beat({"j1"}));
    dispatcher_.CheckLeases();
  }
  EXPECT_FALSE(worker.closed.has_value());
  EXPECT_THAT(worker.JobIds(), ElementsAre("j1"));
  EXPECT_EQ(dispatcher_.Stats().requeued, 0);
  EXPECT_TRUE(dispatcher_.HandleResult(session, Ok("j1")));
}

TEST_F(DispatcherTest, LeaseNotListedInHeartbeatsExpiresAndIsCancelled) {
  FakeConnection worker;
  uint64_t session = Connect("w", kCpu, 1, &worker);
  Submit("j1", "t");
  now_ms_ = 800;
  dispatcher_.HandleHeartbeat(session, Beat({}));
  now_ms_ = 1200;
  dispatcher_.HandleHeartbeat(session, Beat({}));
  dispatcher_.CheckLeases();
  EXPECT_THAT(worker.cancels, ElementsAre("j1"));
  // Requeued and, the worker's slot being free again, leased to it once more.
  EXPECT_THAT(worker.JobIds(), ElementsAre("j1", "j1"));
  EXPECT_EQ(worker.jobs[1].attempt(), 1u);
}

TEST_F(DispatcherTest, JobCompletesAsWorkerLostAfterMaxAttempts) {
  FakeConnection first;
  FakeConnection second;
  uint64_t a = Connect("a", kCpu, 1, &first);
  Submit("j1", "t");
  dispatcher_.UnregisterWorker(a, "crashed");
  uint64_t b = Connect("b", kCpu, 1, &second);
  ASSERT_THAT(second.JobIds(), ElementsAre("j1"));
  dispatcher_.UnregisterWorker(b, "crashed again");
  ASSERT_EQ(results_.size(), 1u);
  EXPECT_EQ(results_[0].job_id(), "j1");
  EXPECT_EQ(results_[0].status(), v1::MEASURE_STATUS_WORKER_LOST);
  EXPECT_THAT(results_[0].error(), HasSubstr("crashed again"));
  EXPECT_EQ(dispatcher_.Stats().queued + dispatcher_.Stats().leased, 0);
}

TEST_F(DispatcherTest, LateResultFromEarlierHolderWinsAndCancelsCurrentHolder) {
  FakeConnection first;
  FakeConnection second;
  uint64_t a = Connect("a", kCpu, 1, &first);
  Submit("j1", "t");
  uint64_t b = Connect("b", kCpu, 1, &second);
  now_ms_ = 1100;
  dispatcher_.HandleHeartbeat(b, Beat({}));
  dispatcher_.HandleHeartbeat(a, Beat({}));  // Alive, but no longer lists j1: lease expires.
  dispatcher_.CheckLeases();
  ASSERT_THAT(second.JobIds(), ElementsAre("j1"));
  EXPECT_TRUE(dispatcher_.HandleResult(a, Ok("j1")));
  EXPECT_THAT(second.cancels, ElementsAre("j1"));
  EXPECT_FALSE(dispatcher_.HandleResult(b, Ok("j1")));
  EXPECT_EQ(results_.size(), 1u);
}

TEST_F(DispatcherTest, SharesWorkersRoundRobinAcrossTasks) {
  FakeConnection worker;
  for (int i = 0; i < 3; ++i) Submit("a" + std::to_string(i), "task-a");
  for (int i = 0; i < 3; ++i) Submit("b" + std::to_string(i), "task-b");
  Submit("c0", "task-c");
  Connect("w", kCpu, 7, &worker);
  EXPECT_THAT(worker.JobIds(), ElementsAre("a0", "b0", "c0", "a1", "b1", "a2", "b2"));
}

TEST_F(DispatcherTest, CancelTaskDropsQueuedAndCancelsLeasedJobs) {
  FakeConnection worker;
  uint64_t session = Connect("w", kCpu, 1, &worker);
  Submit("j1", "t");
  Submit("j2", "t");
  Submit("k1", "other");
  EXPECT_EQ(dispatcher_.CancelTask("t"), 2);
  EXPECT_THAT(worker.cancels, ElementsAre("j1"));
  EXPECT_THAT(worker.JobIds(), ElementsAre("j1", "k1"));
  EXPECT_FALSE(dispatcher_.HandleResult(session, Ok("j1")));
  EXPECT_TRUE(dispatcher_.HandleResult(session, Ok("k1")));
  ASSERT_EQ(results_.size(), 1u);
  EXPECT_EQ(results_[0].job_id(), "k1");
}

TEST_F(DispatcherTest, ReconnectWithSameIdReplacesOldSession) {
  FakeConnection old_stream;
  FakeConnection new_stream;
  Connect("w", kCpu, 1, &old_stream);
  Submit("j1", "t");
  Connect("w", kCpu, 1, &new_stream);
  ASSERT_TRUE(old_stream.closed.has_value());
  EXPECT_EQ(old_stream.closed->code(), StatusCode::kAborted);
  EXPECT_THAT(new_stream.JobIds(), ElementsAre("j1"));
  EXPECT_EQ(dispatcher_.ListWorkers().size(), 1u);
}

TEST_F(DispatcherTest, RejectsInvalidHelloAndJobs) {
  FakeConnection worker;
  v1::WorkerHello hello;
  hello.set_worker_id("w");
  hello.set_slots(1);
  auto session = dispatcher_.RegisterWorker(hello, "test", &worker);
  ASSERT_FALSE(session.ok());
  EXPECT_EQ(session.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(session.status().message(), HasSubstr("empty target"));

  Submit("j1", "t");
  v1::MeasureJob duplicate;
  duplicate.set_job_id("j1");
  duplicate.set_task_id("t");
  duplicate.mutable_target()->set_target(kCpu);
  EXPECT_EQ(dispatcher_.Submit(duplicate, nullptr).code(), StatusCode::kAlreadyExists);
  v1::MeasureJob no_target;
  no_target.set_job_id("j2");
  no_target.set_task_id("t");
  EXPECT_EQ(dispatcher_.Submit(no_target, nullptr).code(), StatusCode::kInvalidArgument);
}

TEST_F(DispatcherTest, ListsWorkersWithTheirLeases) {
  FakeConnection a;
  FakeConnection b;
  Connect("a", kCpu, 2, &a);
  Connect("b", kOtherCpu, 1, &b);
  Submit("j1", "t");
  std::vector<WorkerSnapshot> workers = dispatcher_.ListWorkers();
  ASSERT_EQ(workers.size(), 2u);
  std::map<std::string, WorkerSnapshot> by_id;
  for (auto& worker : workers) by_id[worker.hello.worker_id()] = worker;
  EXPECT_THAT(by_id["a"].running_job_ids, ElementsAre("j1"));
  EXPECT_EQ(by_id["a"].jobs_assigned, 1);
  EXPECT_THAT(by_id["b"].running_job_ids, IsEmpty());
  EXPECT_THAT(dispatcher_.ConnectedTargets(), UnorderedElementsAre(kCpu, kOtherCpu));
}

// A dispatcher of its own options with an injected clock, for the options the fixture fixes.
struct ClockedDispatcher {
  explicit ClockedDispatcher(DispatcherOptions options) : dispatcher(WithClock(options, &now)) {}
  static DispatcherOptions WithClock(DispatcherOptions options, int64_t* now) {
    options.now_ms = [now] { return *now; };
    return options;
  }
  void Submit(const std::string& job_id, const std::string& target) {
    v1::MeasureJob job;
    job.set_job_id(job_id);
    job.set_task_id("t");
    job.mutable_target()->set_target(target);
    ASSERT_TRUE(dispatcher.Submit(job, [this](const v1::MeasureResult& r) { results.push_back(r); })
                    .ok());
  }
  uint64_t Connect(const std::string& id, const std::string& target, FakeConnection* connection) {
    v1::WorkerHello hello;
    hello.set_worker_id(id);
    hello.mutable_target()->set_target(target);
    hello.set_slots(1);
    return *dispatcher.RegisterWorker(hello, "test", connection);
  }
  int64_t now = 1000;
  std::vector<v1::MeasureResult> results;
  Dispatcher dispatcher;
};

TEST(DispatcherQueueTimeoutTest, JobsOfATargetNoWorkerServesCompleteUnmeasuredAfterTheTimeout) {
  DispatcherOptions options;
  options.queue_timeout_ms = 5000;
  ClockedDispatcher d(options);
  FakeConnection other;
  d.Connect("other", kOtherCpu, &other);  // serves another target: does not count
  d.Submit("j1", kCpu);
  d.now = 3000;
  d.dispatcher.CheckLeases();
  EXPECT_EQ(d.dispatcher.UnservedMs(kCpu), 2000);
  EXPECT_EQ(d.dispatcher.UnservedMs(kOtherCpu), 0);
  EXPECT_TRUE(d.results.empty());
  d.now = 6000;
  d.dispatcher.CheckLeases();
  ASSERT_EQ(d.results.size(), 1u);
  EXPECT_EQ(d.results[0].job_id(), "j1");
  EXPECT_EQ(d.results[0].status(), v1::MEASURE_STATUS_UNSPECIFIED);
  EXPECT_EQ(d.results[0].error(), std::string("no worker of target '") + kCpu + "' connected for 5 s");
  EXPECT_EQ(d.dispatcher.Stats().queued, 0);
  EXPECT_TRUE(other.jobs.empty());
}

TEST(DispatcherQueueTimeoutTest, AWorkerOfTheTargetStopsTheClock) {
  DispatcherOptions options;
  options.queue_timeout_ms = 5000;
  ClockedDispatcher d(options);
  d.Submit("j1", kCpu);
  d.Submit("j2", kCpu);
  d.now = 5000;
  FakeConnection worker;
  d.Connect("w", kCpu, &worker);  // takes j1; j2 waits for its slot, served
  EXPECT_EQ(d.dispatcher.UnservedMs(kCpu), 0);
  d.now = 20000;
  d.dispatcher.CheckLeases();  // drops the silent worker; j1 is requeued, the clock restarts
  d.now = 24000;
  d.dispatcher.CheckLeases();
  EXPECT_TRUE(d.results.empty());
  d.now = 25500;
  d.dispatcher.CheckLeases();
  EXPECT_EQ(d.results.size(), 2u);
}

TEST(DispatcherLossHooksTest, LostLeasesAreReportedAndEarlierLossesCount) {
  DispatcherOptions options;
  options.max_attempts = 2;
  std::vector<std::pair<std::string, std::string>> losses;
  options.on_lease_lost = [&](const v1::MeasureJob& job, const std::string& why) {
    losses.emplace_back(job.job_id(), why);
  };
  options.prior_losses = [](const v1::MeasureJob& job) { return job.job_id() == "lost-before" ? 1 : 0; };
  ClockedDispatcher d(options);
  FakeConnection first;
  uint64_t a = d.Connect("a", kCpu, &first);
  d.Submit("fresh", kCpu);
  d.dispatcher.UnregisterWorker(a, "crashed");
  ASSERT_EQ(losses.size(), 1u);
  EXPECT_EQ(losses[0].first, "fresh");
  EXPECT_THAT(losses[0].second, HasSubstr("crashed"));
  EXPECT_TRUE(d.results.empty());  // one loss of two: requeued
  FakeConnection second;
  uint64_t b = d.Connect("b", kCpu, &second);
  v1::MeasureResult ok;
  ok.set_job_id("fresh");
  ok.set_status(v1::MEASURE_STATUS_OK);
  ok.add_repeat_seconds(1e-3);
  ok.set_median_seconds(1e-3);
  ASSERT_TRUE(d.dispatcher.HandleResult(b, ok));
  d.Submit("lost-before", kCpu);  // lost its worker once already (before a restart)
  ASSERT_EQ(second.jobs.back().job_id(), "lost-before");
  EXPECT_EQ(second.jobs.back().attempt(), 1u);
  d.dispatcher.UnregisterWorker(b, "crashed again");
  ASSERT_EQ(d.results.size(), 2u);
  EXPECT_EQ(d.results[1].job_id(), "lost-before");
  EXPECT_EQ(d.results[1].status(), v1::MEASURE_STATUS_WORKER_LOST);  // never sent a third time
  EXPECT_EQ(losses.size(), 2u);
}

TEST_F(DispatcherTest, AJobNamingAWorkerGoesOnlyToThatWorker) {
  FakeConnection a;
  FakeConnection b;
  uint64_t session_a = Connect("a", kCpu, 1, &a);
  Connect("b", kCpu, 4, &b);
  v1::MeasureJob job;
  job.set_job_id("pinned");
  job.set_task_id("t");
  job.mutable_target()->set_target(kCpu);
  job.set_worker_id("a");
  Submit("busy-a", "t");  // b has more free slots: it takes this one
  ASSERT_TRUE(dispatcher_.Submit(job, [](const v1::MeasureResult&) {}).ok());
  Submit("after", "t");  // not held up behind the job that waits for a
  EXPECT_THAT(b.JobIds(), ElementsAre("busy-a", "after"));
  EXPECT_THAT(a.JobIds(), ElementsAre("pinned"));
  EXPECT_TRUE(dispatcher_.HandleResult(session_a, Ok("pinned")));
}

TEST_F(DispatcherTest, AJobNamingAWorkerWaitsWhileThatWorkerIsBusy) {
  FakeConnection a;
  FakeConnection b;
  uint64_t session_a = Connect("a", kCpu, 1, &a);
  Connect("b", kCpu, 4, &b);
  for (const char* id : {"p1", "p2"}) {
    v1::MeasureJob job;
    job.set_job_id(id);
    job.set_task_id("t");
    job.mutable_target()->set_target(kCpu);
    job.set_worker_id("a");
    ASSERT_TRUE(dispatcher_.Submit(job, [](const v1::MeasureResult&) {}).ok());
  }
  EXPECT_THAT(a.JobIds(), ElementsAre("p1"));
  EXPECT_THAT(b.jobs, IsEmpty());
  EXPECT_TRUE(dispatcher_.HandleResult(session_a, Ok("p1")));
  EXPECT_THAT(a.JobIds(), ElementsAre("p1", "p2"));
  EXPECT_THAT(b.jobs, IsEmpty());
}

TEST_F(DispatcherTest, AJobNamingAnAbsentWorkerGoesToAnyWorker) {
  FakeConnection b;
  Connect("b", kCpu, 1, &b);
  v1::MeasureJob job;
  job.set_job_id("pinned");
  job.set_task_id("t");
  job.mutable_target()->set_target(kCpu);
  job.set_worker_id("gone");
  ASSERT_TRUE(dispatcher_.Submit(job, [](const v1::MeasureResult&) {}).ok());
  EXPECT_THAT(b.JobIds(), ElementsAre("pinned"));
}

// Submits job `id` of `task` and completes it OK from `session` (the only worker of kCpu).
void SubmitAndComplete(Dispatcher& dispatcher, uint64_t session, const std::string& id,
                       const std::string& task = "t") {
  v1::MeasureJob job;
  job.set_job_id(id);
  job.set_task_id(task);
  job.mutable_target()->set_target(kCpu);
  ASSERT_TRUE(dispatcher.Submit(job, [](const v1::MeasureResult&) {}).ok());
  v1::MeasureResult result;
  result.set_job_id(id);
  result.set_status(v1::MEASURE_STATUS_OK);
  ASSERT_TRUE(dispatcher.HandleResult(session, result));
}

TEST(DispatcherDriftTest, ACalibrationBeyondTheThresholdReportsTheBatchSinceThePreviousOne) {
  DispatcherOptions options;
  options.drift_threshold = 0.10;
  std::vector<CalibrationEvent> events;
  std::vector<std::vector<CompletedJob>> drifted;
  options.on_calibration = [&](const CalibrationEvent& event) { events.push_back(event); };
  options.on_drift = [&](const CalibrationEvent&, const std::vector<CompletedJob>& batch) {
    drifted.push_back(batch);
  };
  Dispatcher dispatcher(options);
  FakeConnection connection;
  v1::WorkerHello hello;
  hello.set_worker_id("w");
  hello.mutable_target()->set_target(kCpu);
  hello.mutable_device()->set_model("CPU X");
  hello.set_slots(4);
  uint64_t session = *dispatcher.RegisterWorker(hello, "test", &connection);
  auto calibrate = [&](double seconds) {
    v1::Calibration calibration;
    calibration.set_median_seconds(seconds);
    return dispatcher.HandleCalibration(session, calibration);
  };
  auto complete = [&](const std::string& id) { SubmitAndComplete(dispatcher, session, id); };
  ASSERT_TRUE(calibrate(1e-3).ok());  // the baseline
  complete("j1");
  ASSERT_TRUE(calibrate(1.05e-3).ok());  // within 10%: j1 stands
  complete("j2");
  complete("j3");
  auto drift = calibrate(1.5e-3);
  ASSERT_TRUE(drift.ok());
  EXPECT_TRUE(drift->drifted);
  EXPECT_NEAR(drift->drift, 0.5, 1e-9);
  ASSERT_EQ(drifted.size(), 1u);
  ASSERT_EQ(drifted[0].size(), 2u);
  EXPECT_EQ(drifted[0][0].job_id, "j2");
  EXPECT_EQ(drifted[0][1].job_id, "j3");
  ASSERT_EQ(events.size(), 3u);
  EXPECT_FALSE(events[0].drifted);
  EXPECT_FALSE(events[1].drifted);
  EXPECT_EQ(events[2].device_model, "CPU X");
  auto workers = dispatcher.ListWorkers();
  ASSERT_EQ(workers.size(), 1u);
  EXPECT_EQ(workers[0].drift_events, 1);
  EXPECT_DOUBLE_EQ(workers[0].calibration_baseline_seconds, 1.5e-3);  // the new level
  EXPECT_DOUBLE_EQ(workers[0].calibration_last_seconds, 1.5e-3);
  EXPECT_THAT(workers[0].last_drift, HasSubstr("2 job(s) re-measured"));
  // The machine stays at its new level: the next batch stands.
  complete("j4");
  auto steady = calibrate(1.52e-3);
  ASSERT_TRUE(steady.ok());
  EXPECT_FALSE(steady->drifted);
  EXPECT_NEAR(steady->drift, 0.02 / 1.5, 1e-9);
  EXPECT_EQ(drifted.size(), 1u);
  EXPECT_EQ(calibrate(0).status().code(), StatusCode::kInvalidArgument);
}

TEST(DispatcherDriftTest, ATaskAwaitsTheCalibrationAfterItsJobsOnlyFromWorkersThatCalibrate) {
  Dispatcher dispatcher;
  FakeConnection connection;
  v1::WorkerHello hello;
  hello.set_worker_id("w");
  hello.mutable_target()->set_target(kCpu);
  hello.set_slots(4);
  uint64_t session = *dispatcher.RegisterWorker(hello, "test", &connection);
  auto complete = [&](const std::string& id, const std::string& task) {
    SubmitAndComplete(dispatcher, session, id, task);
  };
  v1::Calibration calibration;
  calibration.set_median_seconds(1e-3);
  complete("j1", "t");
  EXPECT_FALSE(dispatcher.AwaitsCalibration("t"));  // it has never calibrated
  ASSERT_TRUE(dispatcher.HandleCalibration(session, calibration).ok());
  EXPECT_FALSE(dispatcher.AwaitsCalibration("t"));  // that calibration came after j1
  complete("j2", "t");
  EXPECT_TRUE(dispatcher.AwaitsCalibration("t"));
  EXPECT_FALSE(dispatcher.AwaitsCalibration("u"));
  ASSERT_TRUE(dispatcher.HandleCalibration(session, calibration).ok());
  EXPECT_FALSE(dispatcher.AwaitsCalibration("t"));
  complete("j3", "t");
  dispatcher.UnregisterWorker(session, "gone");
  EXPECT_FALSE(dispatcher.AwaitsCalibration("t"));  // no worker left to calibrate
}

}  // namespace
}  // namespace tuned::dispatch

// The task manager over a real database (an SQLite file, and a PostgreSQL schema with task
// ownership where the test server runs) and the real dispatcher, with a scripted search
// strategy and an in-process worker that answers every job: results are stored once each,
// resumed tasks skip what they measured before, specs are validated.

#include "server/tasks/task_manager.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <filesystem>
#include <set>
#include <thread>

#include "common/exclusive_gate.h"
#include "compiler/ir/op_library.h"
#include "compiler/lower/pipeline.h"
#include "server/search/model_registry.h"
#include "tests/unit/tuning_db/backend_test_util.h"
#include "server/tasks/worker_losses.h"
#include "tuning_db/database.h"
#include "tuning_db/trace_hash.h"

namespace tuned::tasks {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;

constexpr char kTarget[] = "llvm -mcpu=znver3 -num-cores=2";

// Trace number `i`: opaque to the task manager, distinct per i.
v1::Trace ScriptedTrace(int i) {
  v1::Trace trace;
  trace.set_version(1);
  v1::Instruction* inst = trace.add_instructions();
  inst->set_kind("get_block");
  inst->add_str_attrs("candidate-" + std::to_string(i));
  inst->add_outputs(0);
  return trace;
}

// Offers traces 0, 1, 2, ... in order, except those it was told were measured (the strategy's
// contract: the task runner trusts it), and remembers what it was told.
class ScriptedSearch : public search::SearchStrategy {
 public:
  explicit ScriptedSearch(std::vector<int>* updated) : updated_(updated) {}
  StatusOr<std::vector<search::Candidate>> NextBatch(int n) override {
    std::vector<search::Candidate> batch;
    while (int(batch.size()) < n) {
      search::Candidate candidate;
      candidate.trace = ScriptedTrace(next_++);
      if (measured_.contains(db::TraceHash(candidate.trace))) continue;
      batch.push_back(std::move(candidate));
    }
    return batch;
  }
  Status Update(const std::vector<search::MeasuredCandidate>& results) override {
    updated_->push_back(int(results.size()));
    for (const search::MeasuredCandidate& m : results) measured_.insert(db::TraceHash(m.trace));
    return Status::Ok();
  }

 private:
  int next_ = 0;
  std::set<std::string> measured_;
  std::vector<int>* updated_;
};

// Answers every job on its own thread (never inside the dispatcher's lock). A search job's
// result (the protocol's one repeat) has repeat CV `search_cv`; a job of more repeats has CV 0.
class EchoWorker : public dispatch::WorkerConnection {
 public:
  explicit EchoWorker(dispatch::Dispatcher& dispatcher, std::string id = "echo",
                      double search_cv = 0)
      : dispatcher_(dispatcher), search_cv_(search_cv) {
    v1::WorkerHello hello;
    hello.set_worker_id(id);
    hello.mutable_target()->set_target(kTarget);
    hello.set_slots(4);
    thread_ = std::thread([this] { Serve(); });
    session_ = *dispatcher_.RegisterWorker(hello, "test", this);
  }
  ~EchoWorker() override {
    dispatcher_.UnregisterWorker(session_, "test over");
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  void SendJob(const v1::MeasureJob& job) override {
    std::lock_guard<std::mutex> lock(mu_);
    jobs_.push_back(job);
    received_.push_back(job);
    seen_.insert(db::TraceHash(job.trace()));
    cv_.notify_all();
  }
  void SendCancel(const std::string&) override {}
  void Close(const Status&) override {}

  std::set<std::string> seen() {
    std::lock_guard<std::mutex> lock(mu_);
    return seen_;
  }
  std::vector<v1::MeasureJob> received() {
    std::lock_guard<std::mutex> lock(mu_);
    return received_;
  }
  // Sends a calibration figure, as a worker does after its hello and its batches.
  void Calibrate(double seconds) {
    v1::Calibration calibration;
    calibration.set_median_seconds(seconds);
    ASSERT_TRUE(dispatcher_.HandleCalibration(session_, calibration).ok());
  }
  // Answers every `n`-th job with a build timeout (0: none).
  void TimeOutEveryNthBuild(int n) {
    std::lock_guard<std::mutex> lock(mu_);
    time_out_every_ = n;
  }
  // After its `results`-th result, waits `delay` and calibrates at `seconds`.
  void CalibrateAfter(int results, std::chrono::milliseconds delay, double seconds) {
    std::lock_guard<std::mutex> lock(mu_);
    calibrate_after_ = results;
    calibrate_delay_ = delay;
    calibrate_seconds_ = seconds;
  }

 private:
  void Serve() {
    std::unique_lock<std::mutex> lock(mu_);
    while (true) {
      cv_.wait(lock, [this] { return stop_ || !jobs_.empty(); });
      if (stop_) return;
      v1::MeasureJob job = jobs_.front();
      jobs_.pop_front();
      const bool time_out = time_out_every_ > 0 && ++answered_ % time_out_every_ == 0;
      lock.unlock();
      v1::MeasureResult result;
      result.set_job_id(job.job_id());
      if (time_out) {
        result.set_status(v1::MEASURE_STATUS_BUILD_TIMEOUT);
        result.set_error("build still running after the build timeout");
      } else {
        result.set_status(v1::MEASURE_STATUS_OK);
        result.set_median_seconds(1e-3 + 1e-6 * double(job.trace().ByteSizeLong()));
        result.set_build_seconds(2e-3 + 1e-9 * double(job.trace().ByteSizeLong()));
        result.set_run_seconds(5e-3);
        for (uint32_t i = 0; i < std::max(1u, job.config().repeat()); ++i) {
          result.add_repeat_seconds(1e-3);
        }
        if (job.config().repeat() <= 1) result.set_repeat_cv(search_cv_);
      }
      dispatcher_.HandleResult(session_, result);
      lock.lock();
      if (++results_ == calibrate_after_) {
        lock.unlock();
        std::this_thread::sleep_for(calibrate_delay_);
        Calibrate(calibrate_seconds_);
        lock.lock();
      }
    }
  }

  dispatch::Dispatcher& dispatcher_;
  const double search_cv_;
  uint64_t session_ = 0;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<v1::MeasureJob> jobs_;
  std::vector<v1::MeasureJob> received_;
  std::set<std::string> seen_;
  int results_ = 0;
  int answered_ = 0;
  int time_out_every_ = 0;
  int calibrate_after_ = 0;  // 0: no calibration from the worker's thread
  std::chrono::milliseconds calibrate_delay_{0};
  double calibrate_seconds_ = 0;
  bool stop_ = false;
  std::thread thread_;
};

// A worker of one slot that dies (its stream ends) whenever it is handed `poison`, and answers
// every other job OK. With `revive` it reconnects at once, as a restarted worker process would.
class DyingWorker : public dispatch::WorkerConnection {
 public:
  DyingWorker(dispatch::Dispatcher& dispatcher, v1::Trace poison, bool revive)
      : dispatcher_(dispatcher), poison_(db::TraceHash(poison)), revive_(revive) {
    thread_ = std::thread([this] { Serve(); });
    Connect();
  }
  ~DyingWorker() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
    dispatcher_.UnregisterWorker(session_, "test over");
  }
  void SendJob(const v1::MeasureJob& job) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (db::TraceHash(job.trace()) == poison_) ++poison_sends_;
    jobs_.push_back(job);
    cv_.notify_all();
  }
  void SendCancel(const std::string&) override {}
  void Close(const Status&) override {}
  int poison_sends() {
    std::lock_guard<std::mutex> lock(mu_);
    return poison_sends_;
  }

 private:
  void Connect() {
    v1::WorkerHello hello;
    hello.set_worker_id("dying");
    hello.mutable_target()->set_target(kTarget);
    hello.set_slots(1);
    session_ = *dispatcher_.RegisterWorker(hello, "test", this);
  }
  void Serve() {
    std::unique_lock<std::mutex> lock(mu_);
    while (true) {
      cv_.wait(lock, [this] { return stop_ || !jobs_.empty(); });
      if (stop_) return;
      v1::MeasureJob job = jobs_.front();
      jobs_.pop_front();
      lock.unlock();
      if (db::TraceHash(job.trace()) == poison_) {
        dispatcher_.UnregisterWorker(session_, "killed by its candidate");
        if (revive_) Connect();
      } else {
        v1::MeasureResult result;
        result.set_job_id(job.job_id());
        result.set_status(v1::MEASURE_STATUS_OK);
        result.add_repeat_seconds(1e-3);
        result.set_median_seconds(1e-3);
        dispatcher_.HandleResult(session_, result);
      }
      lock.lock();
    }
  }

  dispatch::Dispatcher& dispatcher_;
  const std::string poison_;
  const bool revive_;
  uint64_t session_ = 0;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<v1::MeasureJob> jobs_;
  int poison_sends_ = 0;
  bool stop_ = false;
  std::thread thread_;
};

class TaskManagerTest : public ::testing::TestWithParam<db::testing::Backend> {
 protected:
  void SetUp() override {
    TUNED_SKIP_UNLESS_BACKEND(GetParam());
    log_ = std::make_unique<db::testing::ScratchLog>(GetParam());
    auto opened = db::OpenDatabase(log_->location());
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    database_ = std::move(*opened);
  }
  void TearDown() override {
    database_.reset();
    log_.reset();
  }

  TaskManagerOptions Options() {
    TaskManagerOptions options;
    options.strategy_factory =
        [this](const search::SearchContext&,
               const v1::SearchOptions&) -> StatusOr<std::unique_ptr<search::SearchStrategy>> {
      return std::unique_ptr<search::SearchStrategy>(new ScriptedSearch(&updates_));
    };
    options.default_measure.set_protocol_version(1);
    options.default_measure.set_repeat(1);
    options.default_measure.set_build_timeout_ms(1000);
    options.default_measure.set_run_timeout_ms(1000);
    options.default_target = kTarget;
    options.ownership = database_->task_ownership();  // PostgreSQL: as `tuned serve` runs it
    // Re-measures have their own tests (below); these count search records only.
    options.default_remeasure.set_noise_cv_threshold(0);
    options.default_remeasure.set_top_k(0);
    return options;
  }

  // The task's records of `kind`.
  std::vector<v1::TuningRecord> RecordsOfKind(const std::string& task_id, v1::RecordKind kind) {
    auto records = database_->TaskRecords(task_id);
    EXPECT_TRUE(records.ok());
    std::vector<v1::TuningRecord> out;
    for (const v1::TuningRecord& record : *records) {
      if (record.kind() == kind) out.push_back(record);
    }
    return out;
  }

  static v1::TaskSpec Spec(uint32_t trials) {
    v1::TaskSpec spec;
    spec.set_workload_spec("matmul(M=8,N=8,K=8)");
    spec.mutable_target()->set_target(kTarget);
    spec.set_trial_budget(trials);
    spec.mutable_search()->set_batch_size(4);
    return spec;
  }

  v1::TaskStatus WaitFinal(TaskManager& manager, const std::string& task_id) {
    v1::TaskStatus status;
    for (int i = 0; i < 600; ++i) {
      auto current = manager.Get(task_id);
      EXPECT_TRUE(current.ok());
      status = *current;
      if (status.state() != v1::TASK_STATE_PENDING && status.state() != v1::TASK_STATE_RUNNING) {
        break;
      }
      std::this_thread::sleep_for(50ms);
    }
    return status;
  }

  // Runs a 4-trial task on one echo worker whose calibration after the last batch comes late
  // and is twice its baseline (a drift), with every `time_out_every`-th build timing out (0:
  // none); returns the finished task's id.
  std::string RunTaskWithADriftAfterItsLastBatch(int time_out_every) {
    TaskManager* sink = nullptr;
    dispatch::DispatcherOptions dispatcher_options;
    dispatcher_options.on_drift = [&sink](const dispatch::CalibrationEvent& event,
                                          const std::vector<dispatch::CompletedJob>& batch) {
      sink->RemeasureDrifted(event.worker_id, batch);
    };
    dispatch::Dispatcher dispatcher(dispatcher_options);
    EchoWorker worker(dispatcher);
    worker.TimeOutEveryNthBuild(time_out_every);
    worker.Calibrate(1e-3);  // the baseline, after its hello
    worker.CalibrateAfter(4, std::chrono::milliseconds(300), 2e-3);
    TaskManager manager(*database_, *database_, dispatcher, Options());
    sink = &manager;
    auto submitted = manager.Submit(Spec(4));
    EXPECT_TRUE(submitted.ok());
    if (!submitted.ok()) return "";
    EXPECT_EQ(WaitFinal(manager, submitted->task_id()).state(), v1::TASK_STATE_SUCCEEDED);
    return submitted->task_id();
  }

  std::unique_ptr<db::testing::ScratchLog> log_;
  std::unique_ptr<db::Database> database_;
  std::vector<int> updates_;
};

INSTANTIATE_TEST_SUITE_P(Backends, TaskManagerTest,
                         ::testing::ValuesIn(db::testing::AllBackends()),
                         [](const auto& info) { return db::testing::BackendName(info.param); });

TEST_P(TaskManagerTest, StoresEveryResultOnceAndSucceeds) {
  dispatch::Dispatcher dispatcher;
  EchoWorker worker(dispatcher);
  TaskManager manager(*database_, *database_, dispatcher, Options());
  auto submitted = manager.Submit(Spec(10));
  ASSERT_TRUE(submitted.ok()) << submitted.status().ToString();
  v1::TaskStatus status = WaitFinal(manager, submitted->task_id());
  EXPECT_EQ(status.state(), v1::TASK_STATE_SUCCEEDED);
  EXPECT_EQ(status.trials_done(), 10u);
  EXPECT_NE(status.best().record_id(), 0);
  auto records = database_->TaskRecords(submitted->task_id());
  ASSERT_TRUE(records.ok());
  EXPECT_EQ(records->size(), 10u);
  std::set<std::string> hashes;
  for (const auto& record : *records) hashes.insert(record.trace_hash());
  EXPECT_EQ(hashes.size(), 10u);
  auto stored = database_->LoadTask(submitted->task_id());
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(stored->state(), v1::TASK_STATE_SUCCEEDED);
  EXPECT_EQ(stored->trials_done(), 10u);
}

TEST_P(TaskManagerTest, TaskTimeAddsUpItsResultsBuildsAndRunsAndTimesItsSearch) {
  dispatch::Dispatcher dispatcher;
  EchoWorker worker(dispatcher);
  TaskManager manager(*database_, *database_, dispatcher, Options());
  auto submitted = manager.Submit(Spec(10));
  ASSERT_TRUE(submitted.ok()) << submitted.status().ToString();
  v1::TaskStatus status = WaitFinal(manager, submitted->task_id());
  ASSERT_EQ(status.state(), v1::TASK_STATE_SUCCEEDED);
  auto records = database_->TaskRecords(submitted->task_id());
  ASSERT_TRUE(records.ok());
  double build = 0, run = 0;
  for (const auto& record : *records) {
    build += record.result().build_seconds();
    run += record.result().run_seconds();
  }
  const v1::TaskTime& time = status.time();
  EXPECT_EQ(time.trials(), 10u);
  EXPECT_NEAR(time.build_seconds(), build, 1e-9);
  EXPECT_NEAR(time.run_seconds(), run, 1e-9);
  EXPECT_GT(time.search_seconds(), 0);
  EXPECT_GE(time.wall_seconds(), time.search_seconds());
}

TEST_P(TaskManagerTest, ResumedTaskSkipsTracesItAlreadyMeasured) {
  // A task interrupted after 3 of 8 trials: its records and RUNNING state are in the database.
  v1::TaskStatus interrupted;
  interrupted.set_task_id("interrupted");
  *interrupted.mutable_spec() = Spec(8);
  *interrupted.mutable_spec()->mutable_measure() = Options().default_measure;
  interrupted.set_state(v1::TASK_STATE_RUNNING);
  interrupted.set_trials_done(3);
  ASSERT_TRUE(database_->SaveTask(interrupted).ok());
  std::set<std::string> before;
  for (int i = 0; i < 3; ++i) {
    v1::TuningRecord record;
    record.mutable_workload()->set_key("matmul(M=8,N=8,K=8,dtype=float32)");
    record.mutable_target()->set_target(kTarget);
    *record.mutable_trace() = ScriptedTrace(i);
    record.mutable_result()->set_status(v1::MEASURE_STATUS_OK);
    record.mutable_result()->add_repeat_seconds(1e-3);
    record.mutable_result()->set_median_seconds(1e-3);
    record.mutable_result()->set_worker_id("before");
    record.set_task_id("interrupted");
    before.insert(db::TraceHash(record.trace()));
    ASSERT_TRUE(database_->InsertRecord(record).ok());
  }

  dispatch::Dispatcher dispatcher;
  EchoWorker worker(dispatcher);
  TaskManager manager(*database_, *database_, dispatcher, Options());
  auto resumed = manager.ResumeUnfinished();
  ASSERT_TRUE(resumed.ok());
  EXPECT_EQ(*resumed, 1);
  v1::TaskStatus status = WaitFinal(manager, "interrupted");
  EXPECT_EQ(status.state(), v1::TASK_STATE_SUCCEEDED);
  EXPECT_EQ(status.trials_done(), 8u);
  auto records = database_->TaskRecords("interrupted");
  ASSERT_TRUE(records.ok());
  EXPECT_EQ(records->size(), 8u);
  std::set<std::string> hashes;
  for (const auto& record : *records) hashes.insert(record.trace_hash());
  EXPECT_EQ(hashes.size(), 8u);
  for (const std::string& hash : worker.seen()) {
    EXPECT_FALSE(before.contains(hash)) << "a trace measured before the restart was sent again";
  }
  ASSERT_FALSE(updates_.empty());
  EXPECT_EQ(updates_.front(), 3) << "the strategy was not told about the earlier results";
}

TEST_P(TaskManagerTest, SpeedUpIsMeasuredAgainstTheDefaultSchedule) {
  // With the real task search, the first candidate measured is the default schedule — the
  // program `tuned compile` builds without a record — and its time is the task's baseline.
  dispatch::Dispatcher dispatcher;
  EchoWorker worker(dispatcher);
  search::ModelRegistry models({database_.get(), database_.get()});
  TaskManagerOptions options = Options();
  options.strategy_factory = [&models](const search::SearchContext& context,
                                       const v1::SearchOptions& search_options) {
    return search::MakeTaskSearch(context, search_options, models);
  };
  TaskManager manager(*database_, *database_, dispatcher, options);
  v1::TaskSpec spec = Spec(6);
  spec.mutable_search()->set_strategy("random");
  auto submitted = manager.Submit(spec);
  ASSERT_TRUE(submitted.ok()) << submitted.status().ToString();
  v1::TaskStatus status = WaitFinal(manager, submitted->task_id());
  EXPECT_EQ(status.state(), v1::TASK_STATE_SUCCEEDED);

  auto workload = std::make_shared<const ir::Workload>(*ir::ParseWorkloadSpec(spec.workload_spec()));
  auto default_trace = lower::DefaultScheduleTrace(workload);
  ASSERT_TRUE(default_trace.ok());
  v1::Trace default_proto;
  schedule::TraceToProto(*default_trace, &default_proto);
  auto records = database_->TaskRecords(submitted->task_id());
  ASSERT_TRUE(records.ok());
  ASSERT_EQ(records->size(), 6u);
  EXPECT_EQ((*records)[0].trace_hash(), db::TraceHash(default_proto))
      << "the first candidate is not the default schedule";
  EXPECT_GT(status.default_median_seconds(), 0);
  EXPECT_DOUBLE_EQ(status.default_median_seconds(), (*records)[0].result().median_seconds());
}

TEST_P(TaskManagerTest, RejectsInvalidSpecsWithReasons) {
  dispatch::Dispatcher dispatcher;
  TaskManager manager(*database_, *database_, dispatcher, Options());
  v1::TaskSpec bad = Spec(4);
  bad.set_workload_spec("matmul(M=8");
  auto status = manager.Submit(bad);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(status.status().message(), HasSubstr("workload spec 'matmul(M=8'"));

  bad = Spec(0);
  EXPECT_THAT(manager.Submit(bad).status().message(), HasSubstr("trial_budget 0"));
  bad = Spec(4);
  bad.mutable_search()->set_epsilon(2);
  EXPECT_THAT(manager.Submit(bad).status().message(), HasSubstr("epsilon"));
  bad = Spec(4);
  bad.mutable_measure()->set_repeat(1);
  // Absent fields take their defaults (field presence); a timeout given as 0 is refused.
  bad.mutable_measure()->set_build_timeout_ms(0);
  bad.mutable_measure()->set_run_timeout_ms(0);
  EXPECT_THAT(manager.Submit(bad).status().message(), HasSubstr("timeout"));
  auto listed = manager.List(std::nullopt);
  ASSERT_TRUE(listed.ok());
  EXPECT_TRUE(listed->empty());
}

TEST_P(TaskManagerTest, TargetsAreParsedOnceAtSubmission) {
  dispatch::Dispatcher dispatcher;  // No worker: the jobs stay queued.
  TaskManager manager(*database_, *database_, dispatcher, Options());
  struct Refused {
    const char* target;
    const char* message;
  };
  for (const Refused& r : {Refused{"tpu -v=4", "unknown kind 'tpu' (expected llvm, cuda or opencl)"},
                           Refused{"cudax -arch=sm_90", "unknown kind 'cudax'"},
                           Refused{"cuda -arch=sm_91", "unknown CUDA architecture 'sm_91'"},
                           Refused{"llvm -num-cores=0", "-num-cores: '0' is not a positive integer"},
                           Refused{"llvm -opt=3", "unknown option '-opt'"}}) {
    v1::TaskSpec bad = Spec(4);
    bad.mutable_target()->set_target(r.target);
    auto status = manager.Submit(bad);
    ASSERT_FALSE(status.ok()) << r.target;
    EXPECT_EQ(status.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(status.status().message(), HasSubstr(r.message));
    EXPECT_EQ(status.status().message().find('\n'), std::string::npos);
  }
  // Accepted: stored in canonical text, with the kind of the parsed target.
  struct Accepted {
    const char* target;
    const char* canonical;
    v1::TargetKind kind;
  };
  for (const Accepted& a : {Accepted{"llvm -num-cores=2  -mcpu=znver3", kTarget, v1::TARGET_KIND_LLVM_CPU},
                            Accepted{"cuda -arch=sm_90",
                                     "cuda -arch=sm_90 -max-threads-per-block=1024 "
                                     "-max-shared-memory-per-block=49152 -warp-size=32",
                                     v1::TARGET_KIND_CUDA}}) {
    v1::TaskSpec spec = Spec(4);
    spec.mutable_target()->set_target(a.target);
    auto submitted = manager.Submit(spec);
    ASSERT_TRUE(submitted.ok()) << submitted.status().ToString();
    EXPECT_EQ(submitted->spec().target().target(), a.canonical);
    EXPECT_EQ(submitted->spec().target().kind(), a.kind);
    ASSERT_TRUE(manager.Cancel(submitted->task_id()).ok());
    WaitFinal(manager, submitted->task_id());
  }
}

TEST_P(TaskManagerTest, CancelStopsTaskAndFinalTaskCannotBeCancelled) {
  dispatch::Dispatcher dispatcher;  // No worker: the jobs stay queued.
  TaskManager manager(*database_, *database_, dispatcher, Options());
  auto submitted = manager.Submit(Spec(4));
  ASSERT_TRUE(submitted.ok());
  auto cancelled = manager.Cancel(submitted->task_id());
  ASSERT_TRUE(cancelled.ok()) << cancelled.status().ToString();
  EXPECT_EQ(cancelled->state(), v1::TASK_STATE_CANCELLED);
  EXPECT_EQ(WaitFinal(manager, submitted->task_id()).state(), v1::TASK_STATE_CANCELLED);
  EXPECT_EQ(manager.Cancel(submitted->task_id()).status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(manager.Get("missing").status().code(), StatusCode::kNotFound);
  for (int i = 0; i < 200 && dispatcher.Stats().queued != 0; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(dispatcher.Stats().queued, 0);
}


// Two managers on one PostgreSQL log play two servers. The first owns a task but has no worker;
// when its session with the database ends, the second takes the task over and finishes it, and
// the first gives it up without writing (it then reads the task from the database).
class SharedLogTaskManagerTest : public TaskManagerTest {};

INSTANTIATE_TEST_SUITE_P(SharedLogBackends, SharedLogTaskManagerTest,
                         ::testing::Values(db::testing::Backend::kPostgres),
                         [](const auto& info) { return db::testing::BackendName(info.param); });

TEST_P(SharedLogTaskManagerTest, AnotherServerTakesOverWhenTheOwnersSessionEnds) {
  auto other_db = db::OpenDatabase(log_->location());
  ASSERT_TRUE(other_db.ok()) << other_db.status().ToString();
  dispatch::Dispatcher stalled_dispatcher;  // No worker: the first server's jobs never finish.
  TaskManagerOptions first_options = Options();
  first_options.ownership = (*other_db)->task_ownership();
  first_options.ownership_check_ms = 1000;
  TaskManager first(**other_db, **other_db, stalled_dispatcher, first_options);
  ASSERT_TRUE(first.ResumeUnfinished().ok());
  auto submitted = first.Submit(Spec(6));
  ASSERT_TRUE(submitted.ok()) << submitted.status().ToString();
  const std::string task_id = submitted->task_id();

  dispatch::Dispatcher dispatcher;
  EchoWorker worker(dispatcher);
  TaskManagerOptions second_options = Options();
  second_options.ownership_check_ms = 50;
  TaskManager second(*database_, *database_, dispatcher, second_options);
  auto resumed = second.ResumeUnfinished();
  ASSERT_TRUE(resumed.ok()) << resumed.status().ToString();
  EXPECT_EQ(*resumed, 0) << "the task of a live owner was resumed";
  std::this_thread::sleep_for(200ms);
  EXPECT_TRUE(database_->TaskRecords(task_id)->empty());

  db::testing::RunOnPostgresLog(log_->location(),
                                "SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity "
                                "WHERE application_name = 'tuned tasks ' || (SELECT value FROM "
                                "meta WHERE key = 'database_id') AND pid IN (SELECT pid FROM "
                                "pg_locks WHERE locktype = 'advisory')");
  v1::TaskStatus status = WaitFinal(second, task_id);
  EXPECT_EQ(status.state(), v1::TASK_STATE_SUCCEEDED) << status.error();
  EXPECT_EQ(status.trials_done(), 6u);
  auto records = database_->TaskRecords(task_id);
  ASSERT_TRUE(records.ok());
  std::set<std::string> hashes;
  for (const auto& record : *records) hashes.insert(record.trace_hash());
  EXPECT_EQ(records->size(), 6u);
  EXPECT_EQ(hashes.size(), 6u);
  // The first server notices at its next check and serves the task from the database.
  EXPECT_EQ(WaitFinal(first, task_id).state(), v1::TASK_STATE_SUCCEEDED);
}

// The first candidate kills its worker: once before a server restart, once after. The second
// loss quarantines it (a WORKER_LOST record, so no search proposes it again) and it is never
// sent a third time.
TEST_P(TaskManagerTest, ACandidateThatKillsItsWorkerTwiceIsQuarantinedAcrossARestart) {
  const std::string key = ir::ParseWorkloadSpec(Spec(4).workload_spec())->key();
  const std::string poison_hash = db::TraceHash(ScriptedTrace(0));
  std::string task_id;
  int sends = 0;
  {
    dispatch::DispatcherOptions options;
    tasks::CountWorkerLossesIn(*database_, options);
    dispatch::Dispatcher dispatcher(options);
    DyingWorker worker(dispatcher, ScriptedTrace(0), /*revive=*/false);
    TaskManager manager(*database_, *database_, dispatcher, Options());
    auto submitted = manager.Submit(Spec(4));
    ASSERT_TRUE(submitted.ok()) << submitted.status().ToString();
    task_id = submitted->task_id();
    for (int i = 0; i < 400 && *database_->WorkerLosses(key, kTarget, poison_hash) < 1; ++i) {
      std::this_thread::sleep_for(10ms);
    }
    ASSERT_EQ(*database_->WorkerLosses(key, kTarget, poison_hash), 1);
    manager.Stop();  // the server goes down; the task stays RUNNING
    sends += worker.poison_sends();
  }
  {
    dispatch::DispatcherOptions options;
    tasks::CountWorkerLossesIn(*database_, options);
    dispatch::Dispatcher dispatcher(options);
    DyingWorker worker(dispatcher, ScriptedTrace(0), /*revive=*/true);
    TaskManager manager(*database_, *database_, dispatcher, Options());
    ASSERT_EQ(*manager.ResumeUnfinished(), 1);
    v1::TaskStatus status = WaitFinal(manager, task_id);
    EXPECT_EQ(status.state(), v1::TASK_STATE_SUCCEEDED) << status.error();
    sends += worker.poison_sends();
  }
  EXPECT_EQ(sends, 2);
  EXPECT_EQ(*database_->WorkerLosses(key, kTarget, poison_hash), 2);
  auto records = database_->TaskRecords(task_id);
  ASSERT_TRUE(records.ok());
  int poison_records = 0;
  for (const v1::TuningRecord& record : *records) {
    if (record.trace_hash() != poison_hash) continue;
    ++poison_records;
    EXPECT_EQ(record.result().status(), v1::MEASURE_STATUS_WORKER_LOST);
  }
  EXPECT_EQ(poison_records, 1);
  EXPECT_TRUE(*database_->HasMeasured(key, kTarget, poison_hash));  // no search proposes it
  auto quarantined = database_->ListQuarantined(key);
  ASSERT_TRUE(quarantined.ok());
  ASSERT_EQ(quarantined->size(), 1u);
  EXPECT_EQ((*quarantined)[0].trace_hash, poison_hash);
  EXPECT_THAT((*quarantined)[0].reason, HasSubstr("killed by its candidate"));
}

TEST_P(TaskManagerTest, ATaskWhoseTargetHasNoWorkerFailsAfterTheQueueTimeoutAndSaysSo) {
  dispatch::DispatcherOptions options;
  options.queue_timeout_ms = 2500;
  options.heartbeat_interval_ms = 50;
  options.lease_timeout_ms = 400;
  dispatch::Dispatcher dispatcher(options);
  dispatcher.StartLeaseChecker();
  TaskManager manager(*database_, *database_, dispatcher, Options());
  auto submitted = manager.Submit(Spec(4));
  ASSERT_TRUE(submitted.ok()) << submitted.status().ToString();
  std::mutex mu;
  std::vector<std::string> waits;
  auto watcher = manager.AddWatcher(submitted->task_id(), [&](const v1::TaskStatus& status) {
    std::lock_guard<std::mutex> lock(mu);
    if (!status.waiting_for().empty()) waits.push_back(status.waiting_for());
  });
  ASSERT_TRUE(watcher.ok());
  v1::TaskStatus status = WaitFinal(manager, submitted->task_id());
  manager.RemoveWatcher(*watcher);
  EXPECT_EQ(status.state(), v1::TASK_STATE_FAILED);
  EXPECT_THAT(status.error(), HasSubstr(std::string("no worker of target '") + kTarget + "' connected"));
  EXPECT_EQ(status.trials_done(), 0u);
  EXPECT_TRUE(database_->TaskRecords(submitted->task_id())->empty());  // nothing measured
  std::lock_guard<std::mutex> lock(mu);
  ASSERT_FALSE(waits.empty());  // it said what it waited for while it waited
  EXPECT_THAT(waits.front(), HasSubstr(std::string("no worker of target '") + kTarget + "' connected"));
  EXPECT_THAT(waits.front(), HasSubstr("fails after 2 s"));
}

TEST_P(TaskManagerTest, PartialMeasureConfigsKeepEveryOtherDefaultVerifyIncluded) {
  dispatch::Dispatcher dispatcher;
  TaskManagerOptions options = Options();
  options.default_measure.set_verify(true);
  options.default_measure.set_warmup(1);
  TaskManager manager(*database_, *database_, dispatcher, options);
  v1::TaskSpec partial = Spec(4);
  partial.mutable_measure()->set_repeat(7);  // an old or careless client: nothing else
  auto normalized = manager.NormalizeSpec(partial);
  ASSERT_TRUE(normalized.ok()) << normalized.status().ToString();
  EXPECT_EQ(normalized->measure().repeat(), 7u);
  EXPECT_TRUE(normalized->measure().has_verify());
  EXPECT_TRUE(normalized->measure().verify());
  EXPECT_EQ(normalized->measure().warmup(), 1u);
  EXPECT_EQ(normalized->measure().build_timeout_ms(), 1000u);
  v1::TaskSpec unverified = Spec(4);
  unverified.mutable_measure()->set_verify(false);  // asked for explicitly (--no-verify)
  EXPECT_FALSE(manager.NormalizeSpec(unverified)->measure().verify());
  v1::TaskSpec zero_warmup = Spec(4);
  zero_warmup.mutable_measure()->set_warmup(0);  // an explicit zero is kept, not defaulted
  EXPECT_EQ(manager.NormalizeSpec(zero_warmup)->measure().warmup(), 0u);
}

TEST_P(TaskManagerTest, NoisyRecordsAreRemeasuredWithMoreRepeatsBeforeTheyRank) {
  dispatch::Dispatcher dispatcher;
  EchoWorker worker(dispatcher, "echo", /*search_cv=*/0.2);
  TaskManagerOptions options = Options();
  options.default_remeasure.set_noise_cv_threshold(0.05);
  TaskManager manager(*database_, *database_, dispatcher, options);
  auto submitted = manager.Submit(Spec(8));
  ASSERT_TRUE(submitted.ok()) << submitted.status().ToString();
  v1::TaskStatus status = WaitFinal(manager, submitted->task_id());
  EXPECT_EQ(status.state(), v1::TASK_STATE_SUCCEEDED) << status.error();
  EXPECT_EQ(status.trials_done(), 8u);  // re-measures are not trials
  const auto search = RecordsOfKind(submitted->task_id(), v1::RECORD_KIND_SEARCH);
  const auto remeasured = RecordsOfKind(submitted->task_id(), v1::RECORD_KIND_REMEASURE);
  EXPECT_EQ(search.size(), 8u);
  ASSERT_EQ(remeasured.size(), 8u);
  std::set<std::string> hashes;
  for (const v1::TuningRecord& record : remeasured) {
    EXPECT_EQ(record.config().repeat(), 3u);  // noise_repeat_factor 3 times the protocol's 1
    EXPECT_EQ(record.result().repeat_seconds_size(), 3);
    hashes.insert(record.trace_hash());
  }
  EXPECT_EQ(hashes.size(), 8u);
  EXPECT_EQ(status.best().kind(), v1::RECORD_KIND_REMEASURE);  // the noisy figures never ranked
}

TEST_P(TaskManagerTest, QuietRecordsAreNotRemeasured) {
  dispatch::Dispatcher dispatcher;
  EchoWorker worker(dispatcher, "echo", /*search_cv=*/0.01);
  TaskManagerOptions options = Options();
  options.default_remeasure.set_noise_cv_threshold(0.05);
  TaskManager manager(*database_, *database_, dispatcher, options);
  auto submitted = manager.Submit(Spec(4));
  ASSERT_TRUE(submitted.ok());
  EXPECT_EQ(WaitFinal(manager, submitted->task_id()).state(), v1::TASK_STATE_SUCCEEDED);
  EXPECT_TRUE(RecordsOfKind(submitted->task_id(), v1::RECORD_KIND_REMEASURE).empty());
}

TEST_P(TaskManagerTest, TopKAreRemeasuredInterleavedAndTheWinnerIsAFinalRecord) {
  dispatch::Dispatcher dispatcher;
  EchoWorker worker(dispatcher);
  TaskManagerOptions options = Options();
  options.default_remeasure.set_top_k(3);
  options.default_remeasure.set_top_k_rounds(2);
  TaskManager manager(*database_, *database_, dispatcher, options);
  auto submitted = manager.Submit(Spec(10));
  ASSERT_TRUE(submitted.ok());
  v1::TaskStatus status = WaitFinal(manager, submitted->task_id());
  EXPECT_EQ(status.state(), v1::TASK_STATE_SUCCEEDED) << status.error();
  EXPECT_EQ(status.trials_done(), 10u);
  const auto finals = RecordsOfKind(submitted->task_id(), v1::RECORD_KIND_FINAL);
  ASSERT_EQ(finals.size(), 3u);
  std::set<std::string> hashes;
  for (const v1::TuningRecord& record : finals) {
    EXPECT_EQ(record.result().repeat_seconds_size(), 2);  // one repeat per round, two rounds
    EXPECT_EQ(record.result().worker_id(), "echo");
    hashes.insert(record.trace_hash());
  }
  EXPECT_EQ(hashes.size(), 3u);
  EXPECT_EQ(status.best().kind(), v1::RECORD_KIND_FINAL);
  // The final jobs name their worker and come in rounds: A B C A B C.
  std::vector<v1::MeasureJob> jobs = worker.received();
  ASSERT_EQ(jobs.size(), 16u);
  for (size_t i = 10; i < 16; ++i) EXPECT_EQ(jobs[i].worker_id(), "echo");
  std::set<std::string> round;
  for (size_t i = 10; i < 13; ++i) {
    round.insert(db::TraceHash(jobs[i].trace()));
    EXPECT_EQ(db::TraceHash(jobs[i].trace()), db::TraceHash(jobs[i + 3].trace()));
  }
  EXPECT_EQ(round, hashes);
  // The log's lookup agrees: only FINAL records rank.
  auto best = database_->GetBestRecords({finals[0].workload().key(), kTarget, "", 10});
  ASSERT_TRUE(best.ok());
  ASSERT_EQ(best->records.size(), 3u);
  for (const v1::TuningRecord& record : best->records) {
    EXPECT_EQ(record.kind(), v1::RECORD_KIND_FINAL);
  }
}

// The ScriptedSearch, slowed down, noting every time a timing run was inside the gate while it
// computed (what the embedded `tuned tune` must never let happen).
class GatedSearch : public search::SearchStrategy {
 public:
  GatedSearch(std::vector<int>* updated, const std::atomic<bool>* timing, std::atomic<int>* calls,
              std::atomic<int>* overlaps)
      : inner_(updated), timing_(timing), calls_(calls), overlaps_(overlaps) {}
  StatusOr<std::vector<search::Candidate>> NextBatch(int n) override {
    Compute();
    return inner_.NextBatch(n);
  }
  Status Update(const std::vector<search::MeasuredCandidate>& results) override {
    Compute();
    return inner_.Update(results);
  }

 private:
  void Compute() {
    ++*calls_;
    if (timing_->load()) ++*overlaps_;
    std::this_thread::sleep_for(20ms);  // long beside the timer's 3 ms cycle
    if (timing_->load()) ++*overlaps_;
  }
  ScriptedSearch inner_;
  const std::atomic<bool>* timing_;
  std::atomic<int>* calls_;
  std::atomic<int>* overlaps_;
};

TEST_P(TaskManagerTest, TheSearchNeverComputesWhileAKernelIsTimedOnItsGate) {
  ExclusiveGate gate;
  std::atomic<bool> timing{false};
  std::atomic<bool> stop{false};
  std::atomic<int> timings{0};
  std::atomic<int> calls{0};
  std::atomic<int> overlaps{0};
  // A timer like the engine's (calibrations come unasked): in exclusively, time, out, again.
  std::thread timer([&] {
    while (!stop) {
      {
        ExclusiveGate::Exclusive exclusive(gate);
        timing = true;
        std::this_thread::sleep_for(2ms);
        timing = false;
      }
      ++timings;
      std::this_thread::sleep_for(1ms);
    }
  });
  dispatch::Dispatcher dispatcher;
  EchoWorker worker(dispatcher);
  TaskManagerOptions options = Options();
  options.search_gate = &gate;
  options.strategy_factory =
      [&](const search::SearchContext&,
          const v1::SearchOptions&) -> StatusOr<std::unique_ptr<search::SearchStrategy>> {
    return std::unique_ptr<search::SearchStrategy>(
        new GatedSearch(&updates_, &timing, &calls, &overlaps));
  };
  TaskManager manager(*database_, *database_, dispatcher, options);
  auto submitted = manager.Submit(Spec(12));
  ASSERT_TRUE(submitted.ok()) << submitted.status().ToString();
  v1::TaskStatus status = WaitFinal(manager, submitted->task_id());
  stop = true;
  timer.join();
  EXPECT_EQ(status.state(), v1::TASK_STATE_SUCCEEDED) << status.error();
  EXPECT_EQ(status.trials_done(), 12u);
  EXPECT_GE(calls.load(), 6);    // three batches proposed, three learned from
  EXPECT_GT(timings.load(), 0);  // the timer did get in, between the search's stretches
  EXPECT_EQ(overlaps.load(), 0);
}

TEST_P(TaskManagerTest, TopKAreRemeasuredOnASecondWorkerOfTheSameDevice) {
  dispatch::Dispatcher dispatcher;
  EchoWorker first(dispatcher, "echo-a");
  EchoWorker second(dispatcher, "echo-b");
  TaskManagerOptions options = Options();
  options.default_remeasure.set_top_k(2);
  options.default_remeasure.set_top_k_rounds(1);
  TaskManager manager(*database_, *database_, dispatcher, options);
  auto submitted = manager.Submit(Spec(6));
  ASSERT_TRUE(submitted.ok());
  EXPECT_EQ(WaitFinal(manager, submitted->task_id()).state(), v1::TASK_STATE_SUCCEEDED);
  const auto finals = RecordsOfKind(submitted->task_id(), v1::RECORD_KIND_FINAL);
  ASSERT_EQ(finals.size(), 4u);  // 2 traces on 2 workers
  std::map<std::string, int> per_worker;
  for (const v1::TuningRecord& record : finals) ++per_worker[record.result().worker_id()];
  EXPECT_EQ(per_worker["echo-a"], 2);
  EXPECT_EQ(per_worker["echo-b"], 2);
}

TEST_P(TaskManagerTest, ADriftInTheCalibrationAfterTheLastBatchStillRemeasuresIt) {
  const std::string task_id = RunTaskWithADriftAfterItsLastBatch(0);
  // The task waited for that calibration and measured the drifted batch again.
  EXPECT_EQ(RecordsOfKind(task_id, v1::RECORD_KIND_REMEASURE).size(), 4u);
  EXPECT_EQ(RecordsOfKind(task_id, v1::RECORD_KIND_SEARCH).size(), 4u);
}

TEST_P(TaskManagerTest, ADriftRemeasuresOnlyTheBatchsTimedCandidates) {
  // Half of the batch's builds time out.
  const std::string task_id = RunTaskWithADriftAfterItsLastBatch(2);
  const std::vector<v1::TuningRecord> search = RecordsOfKind(task_id, v1::RECORD_KIND_SEARCH);
  ASSERT_EQ(search.size(), 4u);
  std::set<std::string> timed;
  for (const v1::TuningRecord& record : search) {
    if (record.result().status() == v1::MEASURE_STATUS_OK) timed.insert(db::TraceHash(record.trace()));
  }
  ASSERT_EQ(timed.size(), 2u);
  // The drift re-measured the two timed candidates, not the two whose builds timed out.
  const std::vector<v1::TuningRecord> remeasured = RecordsOfKind(task_id, v1::RECORD_KIND_REMEASURE);
  ASSERT_EQ(remeasured.size(), 2u);
  for (const v1::TuningRecord& record : remeasured) EXPECT_TRUE(timed.count(db::TraceHash(record.trace())));
}

TEST_P(TaskManagerTest, AFinishedTaskIgnoresADrift) {
  dispatch::Dispatcher dispatcher;
  EchoWorker worker(dispatcher);
  TaskManager manager(*database_, *database_, dispatcher, Options());
  auto submitted = manager.Submit(Spec(4));
  ASSERT_TRUE(submitted.ok());
  v1::TaskStatus status = WaitFinal(manager, submitted->task_id());
  ASSERT_EQ(status.state(), v1::TASK_STATE_SUCCEEDED);
  // Its runner is gone: nothing more is measured. (A running task's drift: cluster_test.)
  std::vector<dispatch::CompletedJob> batch;
  for (const v1::MeasureJob& job : worker.received()) batch.push_back({job.task_id(), job.job_id()});
  manager.RemeasureDrifted("echo", batch);
  EXPECT_TRUE(RecordsOfKind(submitted->task_id(), v1::RECORD_KIND_REMEASURE).empty());
}

}  // namespace
}  // namespace tuned::tasks

// A worker connected to the real server stack survives builds that hang and builds that crash
// (the test-only FaultyBuilder plants them in its engine's build process): each job gets its
// result, the worker's one stream stays up, and the next job measures OK.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <condition_variable>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>

#include "server/stack/server_stack.h"
#include "tests/unit/worker/faulty_builder.h"
#include "tests/unit/worker/worker_test_util.h"
#include "worker/builder.h"
#include "worker/client/worker_client.h"

namespace tuned::worker {
namespace {

using ::testing::HasSubstr;
using testing::Fault;
using testing::FaultTable;
using testing::kSmallMatmul;
using testing::MakeJob;

class ConnectedFaultTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_path_ = (std::filesystem::temp_directory_path() /
                ("tuned-connected-fault-" + std::to_string(::getpid()) + ".db"))
                   .string();
    server::ServerStackConfig config;
    config.db_path = db_path_;
    config.access.shared = "token";
    config.resume_tasks = false;
    config.dispatcher.heartbeat_interval_ms = 100;
    config.dispatcher.lease_timeout_ms = 1500;
    auto stack = server::ServerStack::Start(config);
    ASSERT_TRUE(stack.ok()) << stack.status().ToString();
    stack_ = std::move(stack).value();
    faults_ = std::make_shared<FaultTable>();
    auto engine = CreateMeasurementEngine({}, testing::FaultyBuilderFactory(faults_));
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    engine_ = std::move(engine).value();
    WorkerClientOptions options;
    options.channel = stack_->server().InProcessChannel();
    options.token = "token";
    options.worker_id = "faulty-worker";
    client_ = std::make_unique<WorkerClient>(options, *engine_);
    worker_thread_ = std::thread([this] { (void)client_->Run(); });
    for (int i = 0; i < 200 && stack_->dispatcher().ListWorkers().empty(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ASSERT_EQ(stack_->dispatcher().ListWorkers().size(), 1u);
  }

  void TearDown() override {
    if (client_) client_->Stop();
    if (worker_thread_.joinable()) worker_thread_.join();
    stack_.reset();
    if (engine_) engine_->Drain();
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(db_path_ + suffix);
  }

  // Sends `job` through the dispatcher to the connected worker and waits for its result.
  v1::MeasureResult Dispatch(v1::MeasureJob job) {
    job.set_task_id("fault-task");
    *job.mutable_target() = engine_->target();
    std::mutex mu;
    std::condition_variable cv;
    std::optional<v1::MeasureResult> result;
    Status submitted = stack_->dispatcher().Submit(job, [&](const v1::MeasureResult& r) {
      std::lock_guard lock(mu);
      result = r;
      cv.notify_all();
    });
    EXPECT_TRUE(submitted.ok()) << submitted.ToString();
    std::unique_lock lock(mu);
    cv.wait_for(lock, std::chrono::seconds(30), [&] { return result.has_value(); });
    EXPECT_TRUE(result.has_value()) << "no result for " << job.job_id();
    return result.value_or(v1::MeasureResult());
  }

  std::string db_path_;
  std::unique_ptr<server::ServerStack> stack_;
  std::shared_ptr<FaultTable> faults_;
  std::unique_ptr<MeasurementEngine> engine_;
  std::unique_ptr<WorkerClient> client_;
  std::thread worker_thread_;
};

TEST_F(ConnectedFaultTest, HangingAndCrashingBuildsLeaveTheWorkerConnected) {
  v1::MeasureJob hanging = MakeJob(kSmallMatmul, "hanging-build");
  hanging.mutable_config()->set_build_timeout_ms(500);  // heartbeats keep the lease meanwhile
  faults_->Set(hanging.job_id(), Fault::kHangingBuild);
  v1::MeasureResult hung = Dispatch(hanging);
  EXPECT_EQ(hung.status(), v1::MEASURE_STATUS_BUILD_TIMEOUT) << hung.error();
  EXPECT_EQ(hung.worker_id(), "faulty-worker");

  v1::MeasureJob crashing = MakeJob(kSmallMatmul, "crashing-build");
  faults_->Set(crashing.job_id(), Fault::kCrashingBuild);
  v1::MeasureResult crashed = Dispatch(crashing);
  EXPECT_EQ(crashed.status(), v1::MEASURE_STATUS_COMPILE_ERROR);
  EXPECT_THAT(crashed.error(), HasSubstr("SIGSEGV"));

  v1::MeasureResult next = Dispatch(MakeJob(kSmallMatmul, "next"));
  EXPECT_EQ(next.status(), v1::MEASURE_STATUS_OK) << next.error();
  EXPECT_GT(next.median_seconds(), 0);

  // One stream throughout: never dropped, no lease lost, nothing requeued.
  EXPECT_EQ(client_->stats().sessions, 1);
  std::vector<dispatch::WorkerSnapshot> workers = stack_->dispatcher().ListWorkers();
  ASSERT_EQ(workers.size(), 1u);
  EXPECT_EQ(workers[0].leases_lost, 0);
  EXPECT_EQ(workers[0].results, 3);
  EXPECT_EQ(stack_->dispatcher().Stats().requeued, 0);
}

TEST_F(ConnectedFaultTest, TheWorkerTimesItsCalibrationKernelAndTheServerStoresIt) {
  // After hello and after each batch; the first figure is the worker's baseline.
  std::vector<db::WorkerCalibration> stored;
  // On a loaded machine the kernel takes seconds.
  auto wait_for = [&](size_t count) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (stored.size() < count && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      auto listed = stack_->database().ListCalibrations("faulty-worker", 10);
      ASSERT_TRUE(listed.ok()) << listed.status().ToString();
      stored = *listed;
    }
  };
  // The one after hello first: a job arriving before it would make the two one.
  wait_for(1);
  ASSERT_EQ(stored.size(), 1u);
  ASSERT_EQ(Dispatch(MakeJob(kSmallMatmul, "one")).status(), v1::MEASURE_STATUS_OK);
  wait_for(2);
  ASSERT_GE(stored.size(), 2u);  // one after hello, one after the job
  EXPECT_GT(stored[0].median_seconds, 0);
  EXPECT_DOUBLE_EQ(stored[0].drift, 0);
  EXPECT_NEAR(stored[1].drift, (stored[1].median_seconds - stored[0].median_seconds) /
                                   stored[0].median_seconds, 1e-12);
  std::vector<dispatch::WorkerSnapshot> workers = stack_->dispatcher().ListWorkers();
  ASSERT_EQ(workers.size(), 1u);
  // A drift (a loaded machine) makes the drifted figure the baseline.
  EXPECT_DOUBLE_EQ(workers[0].calibration_baseline_seconds,
                   stored[1].drifted ? stored[1].median_seconds : stored[0].median_seconds);
}

TEST_F(ConnectedFaultTest, ABatchOfJobsIsCalibratedAfterNotBetweenItsJobs) {
  auto calibrations = [&] {
    auto listed = stack_->database().ListCalibrations("faulty-worker", 100);
    EXPECT_TRUE(listed.ok()) << listed.status().ToString();
    return listed.ok() ? listed->size() : 0;
  };
  // The one after hello first.
  for (int i = 0; i < 3000 && calibrations() < 1; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_EQ(calibrations(), 1u);
  // Six jobs at once: the dispatcher leases the next as soon as a result frees the slot.
  constexpr int kJobs = 6;
  std::mutex mu;
  std::condition_variable cv;
  int done = 0;
  for (int i = 0; i < kJobs; ++i) {
    v1::MeasureJob job = MakeJob(kSmallMatmul, "batch-" + std::to_string(i));
    job.set_task_id("fault-task");
    *job.mutable_target() = engine_->target();
    ASSERT_TRUE(stack_->dispatcher()
                    .Submit(job, [&](const v1::MeasureResult& r) {
                      EXPECT_EQ(r.status(), v1::MEASURE_STATUS_OK) << r.error();
                      std::lock_guard lock(mu);
                      ++done;
                      cv.notify_all();
                    })
                    .ok());
  }
  {
    std::unique_lock lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(120), [&] { return done == kJobs; }));
  }
  // The calibration after the batch comes once the worker has been idle a moment.
  for (int i = 0; i < 3000 && calibrations() < 2; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const size_t after_batch = calibrations() - 1;
  EXPECT_GE(after_batch, 1u);
  // One per job would be kJobs; a loaded machine may stretch a gap between two jobs past the
  // worker's idle threshold now and then, so this allows a couple.
  EXPECT_LE(after_batch, 3u);
}

}  // namespace
}  // namespace tuned::worker

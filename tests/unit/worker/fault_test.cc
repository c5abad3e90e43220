// Candidates that crash, hang, exhaust memory or compute nonsense: each becomes a result and
// the engine measures the next job normally.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tests/unit/worker/faulty_builder.h"
#include "tests/unit/worker/worker_test_util.h"
#include "worker/builder.h"

namespace tuned::worker {
namespace {

using ::testing::HasSubstr;
using testing::Fault;
using testing::FaultTable;
using testing::kSmallMatmul;
using testing::MakeJob;

class FaultTest : public ::testing::Test {
 protected:
  void SetUp() override {
    faults_ = std::make_shared<FaultTable>();
    EngineOptions options;
    options.memory_limit_bytes = uint64_t{1} << 30;
    StatusOr<std::unique_ptr<MeasurementEngine>> engine =
        CreateMeasurementEngine(options, testing::FaultyBuilderFactory(faults_));
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    engine_ = std::move(engine).value();
  }

  v1::MeasureResult MeasureFaulty(Fault fault, v1::MeasureJob job) {
    faults_->Set(job.job_id(), fault);
    StatusOr<v1::MeasureResult> result = engine_->Measure(job);
    EXPECT_TRUE(result.ok()) << result.status().ToString();
    return result.ok() ? *result : v1::MeasureResult();
  }

  void ExpectNextJobOk() {
    StatusOr<v1::MeasureResult> next = engine_->Measure(MakeJob(kSmallMatmul, "next"));
    ASSERT_TRUE(next.ok()) << next.status().ToString();
    EXPECT_EQ(next->status(), v1::MEASURE_STATUS_OK) << next->error();
    EXPECT_GT(next->median_seconds(), 0);
  }

  std::shared_ptr<FaultTable> faults_;
  std::unique_ptr<MeasurementEngine> engine_;
};

TEST_F(FaultTest, OutOfBoundsWriteIsRuntimeErrorNamingTheSignal) {
  v1::MeasureResult result = MeasureFaulty(Fault::kOutOfBoundsWrite, MakeJob(kSmallMatmul, "oob"));
  EXPECT_EQ(result.status(), v1::MEASURE_STATUS_RUNTIME_ERROR);
  EXPECT_THAT(result.error(), HasSubstr("SIGSEGV"));
  EXPECT_THAT(result.error(), HasSubstr("first"));
  EXPECT_EQ(result.repeat_seconds_size(), 0);
  EXPECT_EQ(engine_->stats().runner_restarts, 1);
  ExpectNextJobOk();
  EXPECT_EQ(engine_->stats().runner_restarts, 1);  // an OK candidate's child is no restart
}

TEST_F(FaultTest, NullDereferenceIsRuntimeError) {
  v1::MeasureResult result = MeasureFaulty(Fault::kNullDereference, MakeJob(kSmallMatmul, "null"));
  EXPECT_EQ(result.status(), v1::MEASURE_STATUS_RUNTIME_ERROR);
  EXPECT_THAT(result.error(), HasSubstr("SIGSEGV"));
  ExpectNextJobOk();
}

TEST_F(FaultTest, EndlessKernelTimesOutWithinTheTimeoutPlusAMargin) {
  v1::MeasureJob job = MakeJob(kSmallMatmul, "endless");
  job.mutable_config()->set_run_timeout_ms(300);
  const auto start = std::chrono::steady_clock::now();
  v1::MeasureResult result = MeasureFaulty(Fault::kEndlessLoop, job);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(result.status(), v1::MEASURE_STATUS_TIMEOUT);
  EXPECT_THAT(result.error(), HasSubstr("300 ms"));
  EXPECT_EQ(engine_->stats().runner_restarts, 1);
  // Timeout plus build, reference and fork; generous for a loaded 2-core machine.
  EXPECT_LT(seconds, 0.3 + 3.0);
  ExpectNextJobOk();
}

TEST_F(FaultTest, WrongKernelIsWrongResultWithTheMaxError) {
  v1::MeasureResult result = MeasureFaulty(Fault::kWrongOutput, MakeJob(kSmallMatmul, "wrong"));
  EXPECT_EQ(result.status(), v1::MEASURE_STATUS_WRONG_RESULT);
  EXPECT_THAT(result.error(), HasSubstr("max relative error"));
  EXPECT_GT(result.max_error(), 1.0);
  EXPECT_EQ(result.median_seconds(), 0);  // never ranks
  EXPECT_EQ(result.repeat_seconds_size(), 0);
  ExpectNextJobOk();
}

TEST_F(FaultTest, WrongKernelPassesWhenVerificationIsOff) {
  v1::MeasureJob job = MakeJob(kSmallMatmul, "unverified");
  job.mutable_config()->set_verify(false);
  v1::MeasureResult result = MeasureFaulty(Fault::kWrongOutput, job);
  EXPECT_EQ(result.status(), v1::MEASURE_STATUS_OK);
}

TEST_F(FaultTest, MemoryLimitBreachIsRuntimeError) {
  v1::MeasureResult result = MeasureFaulty(Fault::kMemoryHog, MakeJob(kSmallMatmul, "hog"));
  EXPECT_EQ(result.status(), v1::MEASURE_STATUS_RUNTIME_ERROR);
  EXPECT_THAT(result.error(), HasSubstr("1024 MiB memory limit"));
  ExpectNextJobOk();
}

TEST_F(FaultTest, SlowBuildTimesOutAndTheEngineGoesOn) {
  v1::MeasureJob job = MakeJob(kSmallMatmul, "slow-build");
  job.mutable_config()->set_build_timeout_ms(200);
  const auto start = std::chrono::steady_clock::now();
  v1::MeasureResult result = MeasureFaulty(Fault::kSlowBuild, job);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(result.status(), v1::MEASURE_STATUS_BUILD_TIMEOUT);
  EXPECT_THAT(result.error(), HasSubstr("build"));
  EXPECT_LT(seconds, 1.5);  // did not wait for the 2 s build
  ExpectNextJobOk();
}

TEST_F(FaultTest, HangingBuildIsKilledAtTheBuildTimeout) {
  v1::MeasureJob job = MakeJob(kSmallMatmul, "hanging-build");
  job.mutable_config()->set_build_timeout_ms(300);
  const auto start = std::chrono::steady_clock::now();
  v1::MeasureResult result = MeasureFaulty(Fault::kHangingBuild, job);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(result.status(), v1::MEASURE_STATUS_BUILD_TIMEOUT);
  EXPECT_THAT(result.error(), HasSubstr("300 ms"));
  EXPECT_LT(seconds, 0.3 + 3.0);
  // The build never returned, yet the gate is free: timing (exclusive) works.
  ExpectNextJobOk();
  ExpectNextJobOk();
}

TEST_F(FaultTest, BuildCrashIsCompileErrorNamingTheSignal) {
  v1::MeasureResult result =
      MeasureFaulty(Fault::kCrashingBuild, MakeJob(kSmallMatmul, "crashing-build"));
  EXPECT_EQ(result.status(), v1::MEASURE_STATUS_COMPILE_ERROR);
  EXPECT_THAT(result.error(), HasSubstr("SIGSEGV"));
  EXPECT_THAT(result.error(), HasSubstr("build process"));
  ExpectNextJobOk();
}

// A two-slot engine on the faulty builder, whose results are recorded in the order they come.
class ContainedBuildSlotsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    EngineOptions options;
    options.build_slots = 2;
    StatusOr<std::unique_ptr<MeasurementEngine>> engine =
        CreateMeasurementEngine(options, testing::FaultyBuilderFactory(faults_));
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    engine_ = std::move(engine).value();
  }

  void Submit(const v1::MeasureJob& job) {
    engine_->Submit(job, [this, id = job.job_id()](StatusOr<v1::MeasureResult> result) {
      std::lock_guard lock(mu_);
      order_.push_back(id);
      statuses_[id] = result.ok() ? result->status() : v1::MEASURE_STATUS_UNSPECIFIED;
    });
  }

  std::shared_ptr<FaultTable> faults_ = std::make_shared<FaultTable>();
  std::unique_ptr<MeasurementEngine> engine_;
  std::mutex mu_;
  std::vector<std::string> order_;
  std::map<std::string, v1::MeasureStatus> statuses_;
};

TEST_F(ContainedBuildSlotsTest, AHangingBuildLeavesTheOtherSlotBuilding) {
  v1::MeasureJob hanging = MakeJob(kSmallMatmul, "hangs");
  hanging.mutable_config()->set_build_timeout_ms(1500);
  faults_->Set(hanging.job_id(), Fault::kHangingBuild);
  const auto start = std::chrono::steady_clock::now();
  Submit(hanging);
  for (int i = 0; i < 3; ++i) Submit(MakeJob(kSmallMatmul, "beside" + std::to_string(i)));
  engine_->Drain();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(statuses_[hanging.job_id()], v1::MEASURE_STATUS_BUILD_TIMEOUT);
  ASSERT_EQ(statuses_.size(), 4u);
  for (const auto& [id, status] : statuses_) {
    if (id != hanging.job_id()) {
      EXPECT_EQ(status, v1::MEASURE_STATUS_OK) << id;
    }
  }
  // The three others were built by the second slot during the hang and timed while it hung
  // (the hanging build stopped for each timing run): the hang cost its timeout once, not once
  // per job.
  EXPECT_LT(seconds, 1.5 + 3.0);
}

TEST_F(ContainedBuildSlotsTest, TimingDoesNotWaitForABuildInProgress) {
  v1::MeasureJob slow = MakeJob(kSmallMatmul, "slow");
  faults_->Set(slow.job_id(), Fault::kSlowBuild);  // 2 s in its build process
  Submit(slow);
  for (int i = 0; i < 3; ++i) Submit(MakeJob(kSmallMatmul, "quick" + std::to_string(i)));
  engine_->Drain();
  ASSERT_EQ(statuses_.size(), 4u);
  for (const auto& [id, status] : statuses_) EXPECT_EQ(status, v1::MEASURE_STATUS_OK) << id;
  // The quick candidates were timed while the slow one was still building: their timing runs
  // stopped that build instead of waiting for it.
  ASSERT_EQ(order_.size(), 4u);
  EXPECT_EQ(order_.back(), slow.job_id());
  EXPECT_GE(engine_->stats().builds_overlapping_runs, 1);
}

// Jobs submitted together are timed together (EngineOptions::interleave), their children taking
// turns: a crash, a hang, a memory breach or a wrong answer ends its own candidate only.
TEST_F(ContainedBuildSlotsTest, EachCandidateOfAnInterleavedGroupKeepsItsOwnFault) {
  const std::vector<std::pair<std::string, Fault>> faulty = {
      {"segv", Fault::kOutOfBoundsWrite}, {"endless", Fault::kEndlessLoop},
      {"hog", Fault::kMemoryHog}, {"wrong", Fault::kWrongOutput}};
  Submit(MakeJob(kSmallMatmul, "healthy0"));
  for (const auto& [id, fault] : faulty) {
    v1::MeasureJob job = MakeJob(kSmallMatmul, id);
    job.mutable_config()->set_run_timeout_ms(1000);
    faults_->Set(job.job_id(), fault);
    Submit(job);
  }
  Submit(MakeJob(kSmallMatmul, "healthy1"));
  engine_->Drain();
  ASSERT_EQ(statuses_.size(), 6u);
  EXPECT_EQ(statuses_["healthy0"], v1::MEASURE_STATUS_OK);
  EXPECT_EQ(statuses_["healthy1"], v1::MEASURE_STATUS_OK);
  EXPECT_EQ(statuses_["segv"], v1::MEASURE_STATUS_RUNTIME_ERROR);
  EXPECT_EQ(statuses_["endless"], v1::MEASURE_STATUS_TIMEOUT);
  EXPECT_EQ(statuses_["hog"], v1::MEASURE_STATUS_RUNTIME_ERROR);
  EXPECT_EQ(statuses_["wrong"], v1::MEASURE_STATUS_WRONG_RESULT);
  // The first job built waited for the others' builds and was timed with them.
  EXPECT_GE(engine_->stats().jobs_timed_interleaved, 2);
}

TEST(InterleavedGroups, AGroupStaysWithinItsMemoryBudget) {
  // Each 32x32 matmul's output is 4 KiB: with room for one, every job is timed alone.
  EngineOptions options;
  options.build_slots = 2;
  options.interleave_bytes = 4096;
  auto engine = testing::MakeEngine(options);
  ASSERT_NE(engine, nullptr);
  std::atomic<int> ok = 0;
  for (int i = 0; i < 4; ++i) {
    engine->Submit(MakeJob(kSmallMatmul, "alone" + std::to_string(i)),
                   [&ok](StatusOr<v1::MeasureResult> result) {
                     if (result.ok() && result->status() == v1::MEASURE_STATUS_OK) ++ok;
                   });
  }
  engine->Drain();
  EXPECT_EQ(ok.load(), 4);
  EXPECT_EQ(engine->stats().jobs_timed_interleaved, 0);
}

}  // namespace
}  // namespace tuned::worker

// The GPU measurement engine on the OpenCL device (PoCL here): candidates built, run in the
// runner process, verified and timed; planted faults end the runner (RUNTIME_ERROR, TIMEOUT)
// and the next job runs on a fresh one.

#include <gtest/gtest.h>

#include <algorithm>
#include <mutex>
#include <vector>

#include "compiler/ir/op_library.h"
#include "compiler/ir/workload.h"
#include "target/target.h"
#include "tests/support/gpu_schedules.h"
#include "tests/unit/worker/faulty_gpu_builder.h"
#include "tests/unit/worker/worker_test_util.h"
#include "worker/calibration.h"
#include "worker/gpu/gpu_engine.h"

namespace tuned::worker::testing {
namespace {

constexpr char kMatmul[] = "matmul(M=64,N=64,K=64,dtype=float32)";

v1::MeasureJob GpuJob(const std::string& id, const schedule::Trace& trace) {
  v1::MeasureJob job = MakeJob(kMatmul, id, trace);
  job.mutable_target()->set_target("opencl");
  job.mutable_target()->set_kind(v1::TARGET_KIND_OPENCL);
  job.mutable_config()->set_run_timeout_ms(2000);
  job.mutable_config()->set_build_timeout_ms(4000);
  return job;
}

schedule::Trace TiledMatmulTrace() {
  auto w = ir::ParseWorkloadSpec(kMatmul);
  EXPECT_TRUE(w.ok());
  return tuned::testing::GpuTiledMatmul(std::make_shared<const ir::Workload>(std::move(w).value())).trace();
}

class GpuEngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
#ifndef TUNED_OPENCL_RUNNER
    GTEST_SKIP() << "this build has no OpenCL (TUNED_ENABLE_OPENCL is off): no GPU runner";
#else
    faults_ = std::make_shared<GpuFaultTable>();
    auto engine = MakeEngine(EngineOptions());
    if (!engine.ok() && engine.status().code() == StatusCode::kFailedPrecondition) {
      GTEST_SKIP() << engine.status().message();  // no OpenCL platform installed
    }
    ASSERT_TRUE(engine.ok()) << engine.status().message();
    engine_ = std::move(engine).value();
#endif
  }

  StatusOr<std::unique_ptr<MeasurementEngine>> MakeEngine(EngineOptions options) {
#ifdef TUNED_OPENCL_RUNNER
    options.gpu_runner = TUNED_OPENCL_RUNNER;
#endif
    options.worker_id = "gpu-test";
    auto target = target::ParseTarget("opencl");
    if (!target.ok()) return target.status();
    return gpu::CreateGpuMeasurementEngine(options, *target, FaultyGpuBuilderFactory(faults_));
  }

  // Submits `count` jobs at once and expects every one verified and timed.
  void SubmitAndExpectOk(MeasurementEngine& engine, int count) {
    std::mutex mu;
    std::vector<StatusOr<v1::MeasureResult>> results;
    for (int i = 0; i < count; ++i) {
      engine.Submit(GpuJob("batch-" + std::to_string(i), TiledMatmulTrace()),
                    [&](StatusOr<v1::MeasureResult> result) {
                      std::lock_guard lock(mu);
                      results.push_back(std::move(result));
                    });
    }
    engine.Drain();
    ASSERT_EQ(results.size(), size_t(count));
    for (const auto& result : results) {
      ASSERT_TRUE(result.ok()) << result.status().message();
      EXPECT_EQ(result->status(), v1::MEASURE_STATUS_OK) << result->error();
    }
  }

  void ExpectOk(const std::string& id) {
    auto result = engine_->Measure(GpuJob(id, TiledMatmulTrace()));
    ASSERT_TRUE(result.ok()) << result.status().message();
    EXPECT_EQ(result->status(), v1::MEASURE_STATUS_OK) << result->error();
    EXPECT_EQ(result->repeat_seconds_size(), 3);
    EXPECT_GT(result->median_seconds(), 0);
    EXPECT_LE(result->max_error(), 1e-4);
    EXPECT_EQ(result->worker_id(), "gpu-test");
    EXPECT_EQ(result->device().model(), engine_->device().model());
  }

  std::shared_ptr<GpuFaultTable> faults_;
  std::unique_ptr<MeasurementEngine> engine_;
};

TEST_F(GpuEngineTest, MeasuresAVerifiedCandidateWithDeviceInfo) {
  EXPECT_EQ(engine_->target().target(), "opencl");
  EXPECT_FALSE(engine_->device().model().empty());
  EXPECT_NE(engine_->device().toolkit_version().find("OpenCL"), std::string::npos)
      << engine_->device().toolkit_version();
  EXPECT_GT(engine_->device().num_cores(), 0u);
  ExpectOk("ok-1");
  ExpectOk("ok-2");  // the same workload and seed: the inputs the runner holds
  EXPECT_EQ(engine_->stats().results, 2u);
}

TEST_F(GpuEngineTest, AnUnboundScheduleIsACompileError) {
  auto result = engine_->Measure(GpuJob("unbound", schedule::Trace()));
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_EQ(result->status(), v1::MEASURE_STATUS_COMPILE_ERROR);
  EXPECT_NE(result->error().find("GPU lowering"), std::string::npos) << result->error();
}

TEST_F(GpuEngineTest, TheCalibrationKernelRunsOnTheGpuTarget) {
  // The CPU default schedule (an unbound parallel loop) cannot run here: the kernel must be a
  // GPU program, or the worker never detects drift on a GPU.
  auto kernel = CalibrationKernel::Create(*engine_);
  ASSERT_TRUE(kernel.ok()) << kernel.status().message();
  auto calibration = (*kernel)->Measure();
  ASSERT_TRUE(calibration.ok()) << calibration.status().message();
  EXPECT_GT(calibration->median_seconds(), 0);
}

TEST_F(GpuEngineTest, AJobForAnotherTargetIsRefused) {
  v1::MeasureJob job = GpuJob("cpu", TiledMatmulTrace());
  job.mutable_target()->set_target("llvm -mcpu=generic");
  auto result = engine_->Measure(job);
  EXPECT_FALSE(result.ok());
}

TEST_F(GpuEngineTest, OutOfBoundsAndEndlessKernelsEndTheRunnerAndTheNextJobRuns) {
  faults_->Set("oob", GpuFault::kOutOfBoundsStore);
  faults_->Set("endless", GpuFault::kEndlessLoop);
  auto oob = engine_->Measure(GpuJob("oob", TiledMatmulTrace()));
  ASSERT_TRUE(oob.ok()) << oob.status().message();
  EXPECT_EQ(oob->status(), v1::MEASURE_STATUS_RUNTIME_ERROR) << oob->error();
  EXPECT_NE(oob->error().find("SIGSEGV"), std::string::npos) << oob->error();
  EXPECT_EQ(engine_->stats().runner_restarts, 1);
  ExpectOk("after-oob");
  auto endless = engine_->Measure(GpuJob("endless", TiledMatmulTrace()));
  ASSERT_TRUE(endless.ok()) << endless.status().message();
  EXPECT_EQ(endless->status(), v1::MEASURE_STATUS_TIMEOUT) << endless->error();
  ExpectOk("after-endless");
  EXPECT_EQ(engine_->stats().runner_restarts, 2);  // the OK jobs restarted nothing
}

TEST_F(GpuEngineTest, OnTheHostsOwnCpuBuildsWaitForTheRunningCandidate) {
  // PoCL's device is this CPU: a build beside a run would disturb its timing.
  const auto& features = engine_->device().features();
  ASSERT_NE(std::find(features.begin(), features.end(), "device_type=cpu"), features.end());
  EngineOptions options;
  options.build_slots = 2;
  auto engine = MakeEngine(options);
  ASSERT_TRUE(engine.ok()) << engine.status().message();
  SubmitAndExpectOk(**engine, 4);
  EXPECT_EQ((*engine)->stats().builds_overlapping_runs, 0);
}

TEST_F(GpuEngineTest, BuildsOverlapTheRunningCandidateWhereTheDeviceIsNotThisCpu) {
  // As on a GPU: the next candidates build while one runs, and every result is still right.
  EngineOptions options;
  options.build_slots = 2;
  options.gpu_builds_overlap_runs = true;
  auto engine = MakeEngine(options);
  ASSERT_TRUE(engine.ok()) << engine.status().message();
  SubmitAndExpectOk(**engine, 4);
  EXPECT_GE((*engine)->stats().builds_overlapping_runs, 1);
  EXPECT_EQ((*engine)->stats().results, 4u);
}

}  // namespace
}  // namespace tuned::worker::testing

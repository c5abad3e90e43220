// The GPU engine on a CUDA target. Everywhere: the register-file check, the cubin build of a
// candidate on the worker's CPU (NVRTC, where the toolkit is), and, on a machine without an
// NVIDIA driver, the target refused in one line. On a machine with a GPU of the tested arch
// (TUNED_TEST_CUDA_ARCH, default sm_90): verified, timed candidates with the device's info and
// each kernel's registers, the worker's calibration kernel, and recovery from a sticky error
// (an illegal address) and a hang: each ends the runner and the next job runs on a fresh one.

#include <gtest/gtest.h>

#include <cstdlib>

#include "compiler/codegen/cuda/cuda_candidate.h"
#include "compiler/codegen/gpu/gpu_candidate.h"
#include "compiler/ir/op_library.h"
#include "compiler/ir/workload.h"
#include "compiler/schedule/trace.h"
#include "target/target.h"
#include "tests/support/gpu_schedules.h"
#include "tests/unit/worker/faulty_gpu_builder.h"
#include "tests/unit/worker/worker_test_util.h"
#include "worker/calibration.h"
#include "worker/gpu/gpu_engine.h"

namespace tuned::worker::testing {
namespace {

constexpr char kMatmul[] = "matmul(M=64,N=64,K=64,dtype=float32)";

std::string CudaTargetText() {
  const char* arch = std::getenv("TUNED_TEST_CUDA_ARCH");
  return std::string("cuda -arch=") + (arch != nullptr && *arch != '\0' ? arch : "sm_90");
}

std::shared_ptr<const ir::Workload> Matmul() {
  auto w = ir::ParseWorkloadSpec(kMatmul);
  EXPECT_TRUE(w.ok());
  return std::make_shared<const ir::Workload>(std::move(w).value());
}

v1::GpuCandidateProgram OneLaunch(int64_t block_threads, uint32_t registers) {
  v1::GpuCandidateProgram program;
  v1::GpuKernelLaunch* launch = program.add_launches();
  launch->set_function("k");
  for (int64_t extent : {block_threads, int64_t{1}, int64_t{1}}) launch->add_block(extent);
  v1::KernelResourceUsage* usage = program.add_kernels();
  usage->set_function("k");
  usage->set_registers(registers);
  return program;
}

TEST(CudaRegisterBudget, CountsWarpsAndTheAllocationUnit) {
  // 65536 registers a block: exactly full, then one register per thread more.
  EXPECT_TRUE(codegen::cuda::CheckRegisterBudget(OneLaunch(1024, 64)).ok());
  EXPECT_TRUE(codegen::cuda::CheckRegisterBudget(OneLaunch(512, 128)).ok());
  EXPECT_TRUE(codegen::cuda::CheckRegisterBudget(OneLaunch(256, 255)).ok());  // 255 × 32 rounds up to 8192 a warp
  Status over = codegen::cuda::CheckRegisterBudget(OneLaunch(1024, 65));     // 65 × 32 rounds up to 2304
  EXPECT_EQ(over.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(over.message().find("kernel 'k' needs 65 registers per thread: a block of 1024 threads needs 73728"),
            std::string::npos)
      << over.message();
  EXPECT_FALSE(codegen::cuda::CheckRegisterBudget(OneLaunch(1000, 72)).ok());  // 32 warps (the last partial) × 2304
  EXPECT_TRUE(codegen::cuda::CheckRegisterBudget(OneLaunch(992, 64)).ok());
}

TEST(CudaCandidate, ACandidateIsBuiltToACubinWithEachKernelsResources) {
  auto target = target::ParseTarget(CudaTargetText());
  ASSERT_TRUE(target.ok()) << target.status().message();
  auto workload = Matmul();
  v1::Trace trace;
  schedule::TraceToProto(tuned::testing::GpuTiledMatmul(workload).trace(), &trace);
  auto built = codegen::gpu::BuildGpuCandidate(workload, trace, *target);
  if (codegen::cuda::CudaCompilerVersion().empty()) {
    ASSERT_FALSE(built.ok());
    EXPECT_NE(built.status().message().find("no NVRTC"), std::string::npos) << built.status().message();
    return;
  }
  ASSERT_TRUE(built.ok()) << built.status().message();
  EXPECT_EQ(built->binary().substr(0, 4), std::string("\x7f" "ELF"));
  ASSERT_EQ(built->kernels_size(), built->launches_size());
  for (int i = 0; i < built->launches_size(); ++i) {
    EXPECT_EQ(built->kernels(i).function(), built->launches(i).function());
    EXPECT_GT(built->kernels(i).registers(), 0u);
  }
  EXPECT_EQ(codegen::cuda::CudaCompilerVersion().rfind("NVRTC ", 0), 0u);
}

class CudaEngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
#ifndef TUNED_CUDA_RUNNER
    GTEST_SKIP() << "this build has no CUDA (TUNED_ENABLE_CUDA is off): no CUDA runner";
#else
    faults_ = std::make_shared<GpuFaultTable>();
    EngineOptions options;
    // A packed copy of the build (bench/gpu/make_bundle.sh) names its own runner.
    const char* runner = std::getenv("TUNED_TEST_CUDA_RUNNER");
    options.gpu_runner = runner != nullptr && *runner != '\0' ? runner : TUNED_CUDA_RUNNER;
    options.worker_id = "cuda-test";
    auto target = target::ParseTarget(CudaTargetText());
    ASSERT_TRUE(target.ok()) << target.status().message();
    engine_ = gpu::CreateGpuMeasurementEngine(options, *target, FaultyGpuBuilderFactory(faults_));
#endif
  }

  v1::MeasureJob Job(const std::string& id) {
    v1::MeasureJob job = MakeJob(kMatmul, id, tuned::testing::GpuTiledMatmul(Matmul()).trace());
    job.mutable_target()->set_target(CudaTargetText());
    job.mutable_target()->set_kind(v1::TARGET_KIND_CUDA);
    job.mutable_config()->set_run_timeout_ms(3000);
    return job;
  }

  void ExpectOk(const std::string& id) {
    auto result = (*engine_)->Measure(Job(id));
    ASSERT_TRUE(result.ok()) << result.status().message();
    EXPECT_EQ(result->status(), v1::MEASURE_STATUS_OK) << result->error();
    EXPECT_GT(result->median_seconds(), 0);
    EXPECT_LE(result->max_error(), 1e-4);
    ASSERT_GT(result->kernels_size(), 0);
    EXPECT_GT(result->kernels(0).registers(), 0u);
  }

  std::shared_ptr<GpuFaultTable> faults_;
  StatusOr<std::unique_ptr<MeasurementEngine>> engine_ = InternalError("not created");
};

TEST_F(CudaEngineTest, WithoutADriverTheTargetIsRefusedInOneLine) {
  if (engine_.ok()) GTEST_SKIP() << "this machine has a CUDA driver and device: " << (*engine_)->device().model();
  const std::string& message = engine_.status().message();
  EXPECT_NE(message.find("no CUDA driver on this machine"), std::string::npos) << message;
  EXPECT_NE(message.find("worker target 'cuda"), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

TEST_F(CudaEngineTest, MeasuresVerifiedCandidatesAndRecoversFromStickyErrorsAndHangs) {
  if (!engine_.ok()) GTEST_SKIP() << "no CUDA device to run on: " << engine_.status().message();
  const v1::DeviceInfo& device = (*engine_)->device();
  EXPECT_FALSE(device.model().empty());
  EXPECT_EQ(device.toolkit_version().rfind("NVRTC ", 0), 0u) << device.toolkit_version();
  EXPECT_EQ(device.driver_version().rfind("CUDA driver ", 0), 0u) << device.driver_version();
  EXPECT_GT(device.num_cores(), 0u);
  ExpectOk("ok-1");
  auto calibration_kernel = CalibrationKernel::Create(**engine_);
  ASSERT_TRUE(calibration_kernel.ok()) << calibration_kernel.status().message();
  auto calibration = (*calibration_kernel)->Measure();
  ASSERT_TRUE(calibration.ok()) << calibration.status().message();
  EXPECT_GT(calibration->median_seconds(), 0);
  faults_->Set("illegal-address", GpuFault::kOutOfBoundsStore);
  faults_->Set("hang", GpuFault::kEndlessLoop);
  auto illegal = (*engine_)->Measure(Job("illegal-address"));
  ASSERT_TRUE(illegal.ok()) << illegal.status().message();
  EXPECT_EQ(illegal->status(), v1::MEASURE_STATUS_RUNTIME_ERROR) << illegal->error();
  EXPECT_NE(illegal->error().find("CUDA_ERROR_"), std::string::npos) << illegal->error();
  ExpectOk("after-illegal-address");
  auto hang = (*engine_)->Measure(Job("hang"));
  ASSERT_TRUE(hang.ok()) << hang.status().message();
  EXPECT_EQ(hang->status(), v1::MEASURE_STATUS_TIMEOUT) << hang->error() << " (median " << hang->median_seconds() << " s)";
  ExpectOk("after-hang");
  EXPECT_EQ((*engine_)->stats().runner_restarts, 2);
}

}  // namespace
}  // namespace tuned::worker::testing

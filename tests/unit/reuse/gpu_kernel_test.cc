// GPU targets through the public API <tuned/compiler.h> on a real SQLite log: GetGpuKernel builds
// the best record's program exactly as a worker builds it and describes its launches;
// WriteLauncher writes that program and a launcher; cuda gives a cubin for the target's arch;
// the refusals are one line each. Nothing here runs on the OpenCL device: PoCL is built on
// another LLVM than this process's (docs/gpu.md). The files WriteLauncher writes are the ones
// `tuned compile` writes (tests/cli/gpu_compile_command_test.cc), whose launcher computes the
// reference on PoCL in tests/integration/gpu_tuning_test.cc.

#include <filesystem>
#include <optional>
#include <random>

#include <gtest/gtest.h>

#include "common/version.h"
#include "compiler/codegen/gpu/gpu_candidate.h"
#include "compiler/ir/evaluator.h"
#include "compiler/ir/op_library.h"
#include "compiler/schedule/trace.h"
#include "target/target_proto.h"
#include "tests/support/gpu_schedules.h"
#include "tests/unit/tuning_db/db_test_util.h"
#include "tuned/compiler.h"
#ifdef TUNED_TEST_CUDA
#include "compiler/codegen/cuda/cubin.h"
#endif

namespace tuned {
namespace {

constexpr char kSoftmax[] = "softmax(M=64,N=256)";
constexpr char kMatmul[] = "matmul(M=128,N=128,K=128)";

std::shared_ptr<const ir::Workload> WorkloadOf(const std::string& spec) {
  return std::make_shared<const ir::Workload>(*ir::ParseWorkloadSpec(spec));
}

v1::Trace TraceOf(const schedule::Schedule& sch) {
  v1::Trace trace;
  schedule::TraceToProto(sch.trace(), &trace);
  return trace;
}

// The first random GPU schedule of `w` whose program has several kernels and a global
// intermediate: the launches a user runs in order, passing the intermediate between them.
std::optional<schedule::Schedule> MultiKernelSchedule(const std::shared_ptr<const ir::Workload>& w,
                                                      const target::Target& target) {
  for (uint64_t seed = 1; seed <= 100; ++seed) {
    schedule::Schedule sch = testing::RandomGpuSchedule(w, seed);
    auto program = codegen::gpu::BuildGpuCandidate(w, TraceOf(sch), target);
    if (program.ok() && program->launches_size() > 1 && program->intermediate_bytes_size() > 0) return sch;
  }
  return std::nullopt;
}

class GpuKernelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("tuned_gpu_kernel_" + std::to_string(::getpid()) + "_" + std::to_string(std::random_device{}()));
    std::filesystem::create_directories(dir_);
    db_path_ = (dir_ / "tuned.db").string();
    ASSERT_NE(db::testing::OpenOrFail(db_path_), nullptr);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Records `sch`'s trace as an OK measurement of its workload on `target_text`, `seconds` long.
  void Record(const schedule::Schedule& sch, const std::string& target_text, double seconds = 1e-4,
              uint32_t codegen = 0) {
    auto db = db::testing::OpenOrFail(db_path_);
    ASSERT_NE(db, nullptr);
    v1::TuningRecord record = db::testing::MakeRecord(256, db::testing::kGpu, 1, seconds);
    record.set_codegen_version(codegen);  // 0: unknown, matched by every code generation
    record.mutable_workload()->set_key(sch.workload().key());
    *record.mutable_target() = target::TargetToProto(*target::ParseTarget(target_text));
    *record.mutable_trace() = TraceOf(sch);
    ASSERT_TRUE(db->InsertRecord(record).ok());
  }

  std::unique_ptr<Compiler> Open(const std::string& target_text) {
    auto compiler = Compiler::Open({.db_path = db_path_, .target = target_text});
    EXPECT_TRUE(compiler.ok()) << compiler.status().message();
    return compiler.ok() ? std::move(compiler).value() : nullptr;
  }

  // The kernel of kMatmul from a log holding one record of a tiled schedule on `target_text`.
  std::shared_ptr<const GpuKernel> TiledMatmulKernel(const std::string& target_text) {
    Record(testing::GpuTiledMatmul(WorkloadOf(kMatmul)), target_text);
    compiler_ = Open(target_text);
    if (compiler_ == nullptr) return nullptr;
    auto kernel = compiler_->GetGpuKernel(kMatmul);
    EXPECT_TRUE(kernel.ok()) << kernel.status().message();
    return kernel.ok() ? *kernel : nullptr;
  }

  std::filesystem::path dir_;
  std::string db_path_;
  std::unique_ptr<Compiler> compiler_;
};

TEST_F(GpuKernelTest, GivesTheBestRecordsProgramAndLaunchesOnceAndCachesIt) {
  const target::Target target = *target::ParseTarget("opencl");
  auto w = WorkloadOf(kSoftmax);
  std::optional<schedule::Schedule> sch = MultiKernelSchedule(w, target);
  ASSERT_TRUE(sch.has_value()) << "no random schedule of " << kSoftmax << " has several kernels";
  Record(testing::RandomGpuSchedule(w, 1000), "opencl", 5e-4);  // slower: not the best
  Record(*sch, "opencl", 1e-4);
  auto expected = codegen::gpu::BuildGpuCandidate(w, TraceOf(*sch), target);
  ASSERT_TRUE(expected.ok()) << expected.status().message();

  std::unique_ptr<Compiler> compiler = Open("opencl");
  ASSERT_NE(compiler, nullptr);
  auto kernel = compiler->GetGpuKernel(kSoftmax);
  ASSERT_TRUE(kernel.ok()) << kernel.status().message();
  const GpuKernel& k = **kernel;
  EXPECT_EQ(k.workload_key(), w->key());
  EXPECT_EQ(k.target(), target.ToString());
  EXPECT_EQ(k.program(), expected->source());
  EXPECT_DOUBLE_EQ(k.median_seconds(), 1e-4);
  ASSERT_EQ(int(k.launches().size()), expected->launches_size());
  for (int i = 0; i < expected->launches_size(); ++i) {
    const v1::GpuKernelLaunch& want = expected->launches(i);
    const GpuLaunch& got = k.launches()[size_t(i)];
    EXPECT_EQ(got.function, want.function());
    for (int d = 0; d < 3; ++d) {
      EXPECT_EQ(got.grid[size_t(d)], want.grid(d));
      EXPECT_EQ(got.block[size_t(d)], want.block(d));
    }
    EXPECT_EQ(got.buffers, std::vector<int>(want.buffers().begin(), want.buffers().end()));
    EXPECT_EQ(got.registers, 0);  // an OpenCL program is built where it runs
  }
  ASSERT_EQ(int(k.intermediate_bytes().size()), expected->intermediate_bytes_size());
  EXPECT_EQ(k.intermediate_bytes()[0], int64_t(expected->intermediate_bytes(0)));

  auto again = compiler->GetGpuKernel(kSoftmax);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->get(), kernel->get());
  EXPECT_EQ(compiler->stats().record_hits, 1);
  EXPECT_EQ(compiler->stats().cache_hits, 1);
}

TEST_F(GpuKernelTest, ARecordOfAnOlderCodeGenerationServesWithAWarning) {
  // Only a record timed under the previous code generation: its trace still builds, and the
  // kernel says which version timed it.
  Record(testing::GpuTiledMatmul(WorkloadOf(kMatmul)), "opencl", 1e-4, kCodegenVersion - 1);
  std::unique_ptr<Compiler> compiler = Open("opencl");
  ASSERT_NE(compiler, nullptr);
  auto kernel = compiler->GetGpuKernel(kMatmul);
  ASSERT_TRUE(kernel.ok()) << kernel.status().message();
  ASSERT_EQ((*kernel)->warnings().size(), 1u);
  EXPECT_NE((*kernel)->warnings()[0].find("was timed under code generation " + std::to_string(kCodegenVersion - 1) +
                                          ", this build's is " + std::to_string(kCodegenVersion)),
            std::string::npos)
      << (*kernel)->warnings()[0];
  // A record of this build's code generation (another schedule), even a slower one, serves
  // without one.
  const target::Target target = *target::ParseTarget("opencl");
  std::optional<schedule::Schedule> other;
  for (uint64_t seed = 1; seed <= 50 && !other; ++seed) {
    schedule::Schedule sch = testing::RandomGpuSchedule(WorkloadOf(kMatmul), seed);
    if (codegen::gpu::BuildGpuCandidate(WorkloadOf(kMatmul), TraceOf(sch), target).ok()) other = sch;
  }
  ASSERT_TRUE(other.has_value()) << "no random schedule of " << kMatmul << " builds";
  Record(*other, "opencl", 2e-4, kCodegenVersion);
  std::unique_ptr<Compiler> reopened = Open("opencl");
  ASSERT_NE(reopened, nullptr);
  auto current = reopened->GetGpuKernel(kMatmul);
  ASSERT_TRUE(current.ok()) << current.status().message();
  EXPECT_TRUE((*current)->warnings().empty());
  EXPECT_DOUBLE_EQ((*current)->median_seconds(), 2e-4);
}

TEST_F(GpuKernelTest, WriteLauncherWritesTheProgramAndALauncherNamedForTheCaller) {
  std::shared_ptr<const GpuKernel> kernel = TiledMatmulKernel("opencl");
  ASSERT_NE(kernel, nullptr);

  auto files = kernel->WriteLauncher((dir_ / "mm.cl").string(), "mm");
  ASSERT_TRUE(files.ok()) << files.status().message();
  EXPECT_EQ(files->program, (dir_ / "mm.cl").string());
  EXPECT_EQ(files->launcher, (dir_ / "mm.c").string());
  EXPECT_EQ(files->header, (dir_ / "mm.h").string());
  EXPECT_EQ(db::testing::ReadFile(files->program), kernel->program());
  const std::string launcher = db::testing::ReadFile(files->launcher);
  EXPECT_NE(launcher.find("#include \"mm.h\""), std::string::npos);
  EXPECT_NE(launcher.find("mm_" + kernel->launches()[0].function + "("), std::string::npos) << launcher;

  auto refused = kernel->WriteLauncher((dir_ / "other").string(), "2mm");
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(refused.status().message(), "--name '2mm' is not a C identifier");
  EXPECT_FALSE(std::filesystem::exists(dir_ / "other.cl"));
}

TEST_F(GpuKernelTest, WithoutARecordItIsNotFoundWithTheReason) {
  std::unique_ptr<Compiler> compiler = Open("opencl");
  ASSERT_NE(compiler, nullptr);
  auto kernel = compiler->GetGpuKernel(kMatmul);
  EXPECT_EQ(kernel.status().code(), StatusCode::kNotFound);
  EXPECT_NE(kernel.status().message().find("a GPU target has no default schedule to fall back to"),
            std::string::npos)
      << kernel.status().message();
  EXPECT_EQ(kernel.status().message().find('\n'), std::string::npos);
}

TEST_F(GpuKernelTest, EachKindOfTargetRefusesTheOthersRequest) {
  std::unique_ptr<Compiler> gpu = Open("opencl");
  ASSERT_NE(gpu, nullptr);
  auto cpu_kernel = gpu->GetKernel(kMatmul);
  EXPECT_EQ(cpu_kernel.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(cpu_kernel.status().message().find("is a GPU target: GetGpuKernel gives its program"), std::string::npos)
      << cpu_kernel.status().message();

  std::unique_ptr<Compiler> cpu = Open("");
  ASSERT_NE(cpu, nullptr);
  auto gpu_kernel = cpu->GetGpuKernel(kMatmul);
  EXPECT_EQ(gpu_kernel.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(gpu_kernel.status().message().find("is a CPU target: GetKernel gives its kernel"), std::string::npos)
      << gpu_kernel.status().message();
}

#ifdef TUNED_TEST_CUDA
// The cubin NVRTC builds for the target's arch, as a worker builds it, with ptxas's registers.
TEST_F(GpuKernelTest, CudaGivesTheCubinOfTheTargetsArchAndItsRegisters) {
  std::shared_ptr<const GpuKernel> kernel = TiledMatmulKernel("cuda -arch=sm_90");
  ASSERT_NE(kernel, nullptr);
  StatusOr<std::string> arch = codegen::cuda::CubinArch(kernel->program());
  ASSERT_TRUE(arch.ok()) << arch.status().message();
  EXPECT_EQ(*arch, "sm_90");
  ASSERT_FALSE(kernel->launches().empty());
  for (const GpuLaunch& launch : kernel->launches()) EXPECT_GT(launch.registers, 0) << launch.function;
}
#else
TEST_F(GpuKernelTest, CudaInABuildWithoutNvrtcIsRefusedAtOpen) {
  auto compiler = Compiler::Open({.db_path = db_path_, .target = "cuda -arch=sm_90"});
  EXPECT_EQ(compiler.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(compiler.status().message().find("this build has no CUDA support"), std::string::npos)
      << compiler.status().message();
}
#endif

}  // namespace
}  // namespace tuned

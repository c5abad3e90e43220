// `tuned compile` of a GPU target on the real binary: the best record of a fresh SQLite log
// compiled into the device program (OpenCL C, or a cubin for cuda) and a C launcher that the
// system's C compiler builds and links (against the toolkit's stub libcuda for cuda: this
// machine has no GPU, so nothing here runs the launcher); and the one-line refusals.

#include <dlfcn.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iomanip>
#include <memory>
#include <optional>
#include <sstream>
#include <string>

#include "compiler/codegen/gpu/gpu_candidate.h"
#include "compiler/ir/op_library.h"
#include "compiler/schedule/trace.h"
#include "target/target_proto.h"
#include "tests/cli/run_tuned.h"
#include "tests/support/gpu_schedules.h"
#include "tests/unit/tuning_db/db_test_util.h"
#include "tuned/compiler.h"
#ifdef TUNED_TEST_CUDA
#include "compiler/codegen/cuda/cubin.h"
#endif

namespace tuned::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kCuda[] = "cuda -arch=sm_90";
// The target of the refusals below: cuda where this build compiles it (else refused first).
#ifdef TUNED_TEST_CUDA
constexpr char kRefusalTarget[] = "cuda -arch=sm_90";
#else
constexpr char kRefusalTarget[] = "opencl";
#endif
constexpr char kMatmul[] = "matmul(M=256,N=256,K=256)";
constexpr char kSoftmax[] = "softmax(M=64,N=256)";

std::shared_ptr<const ir::Workload> WorkloadOf(const std::string& spec) {
  return std::make_shared<const ir::Workload>(*ir::ParseWorkloadSpec(spec));
}

class GpuCompileCommandTest : public ScratchDirTest {
 protected:
  std::string Db() const { return dir_ + "/tuned.db"; }

  // Records `sch`'s trace in the log as an OK measurement of its workload on `target`.
  void Record(const schedule::Schedule& sch, const target::Target& target) {
    auto db = db::testing::OpenOrFail(Db());
    ASSERT_NE(db, nullptr);
    v1::TuningRecord record = db::testing::MakeRecord(256, db::testing::kGpu, 1, 1e-4);
    record.mutable_workload()->set_key(sch.workload().key());
    *record.mutable_target() = target::TargetToProto(target);
    schedule::TraceToProto(sch.trace(), record.mutable_trace());
    ASSERT_TRUE(db->InsertRecord(record).ok());
  }

  // `tuned compile` of `spec`'s best record on `target` into dir_/NAME.*, with --name NAME.
  CommandOutput Compile(const std::string& spec, const std::string& target,
                        const std::string& name) {
    return RunTuned("compile -w '" + spec + "' --target '" + target + "' --db " + Db() + " -o " +
                    dir_ + "/" + name + " --name " + name);
  }

  // A shell command's exit code, its output in `log` (a failure's reason).
  int Shell(const std::string& command, std::string* log = nullptr) {
    const std::string out = dir_ + "/shell.log";
    int status = std::system((command + " >" + out + " 2>&1").c_str());
    if (log != nullptr) *log = db::testing::ReadFile(out);
    return status;
  }

  // The launcher dir_/NAME.c compiled warning-free and linked into dir_/libNAME.so with every
  // symbol resolved against `libs`; the library's defined dynamic symbols with their sizes.
  std::string BuildLauncher(const std::string& name, const std::string& flags,
                            const std::string& libs) {
    const std::string object = dir_ + "/" + name + ".o";
    const std::string library = dir_ + "/lib" + name + ".so";
    std::string log;
    EXPECT_EQ(Shell("cc -c -fPIC -Wall -Werror " + flags + " -o " + object + " " + dir_ + "/" +
                        name + ".c",
                    &log),
              0)
        << log;
    EXPECT_EQ(
        Shell("cc -shared -Wl,--no-undefined -o " + library + " " + object + " " + libs, &log), 0)
        << log;
    EXPECT_EQ(Shell("nm -D -S --defined-only " + library, &log), 0) << log;
    return log;
  }

  // The program `tuned compile` should write for `sch` on `target`, built here alike.
  static StatusOr<v1::GpuCandidateProgram> ProgramOf(const schedule::Schedule& sch,
                                                     const target::Target& target) {
    v1::Trace trace;
    schedule::TraceToProto(sch.trace(), &trace);
    return codegen::gpu::BuildGpuCandidate(sch.state().workload, trace, target);
  }

  // The first random GPU schedule of `w` whose program has several kernels and a global
  // intermediate: what a launcher must allocate and run in order.
  static std::optional<schedule::Schedule> MultiKernelSchedule(
      const std::shared_ptr<const ir::Workload>& w, const target::Target& target) {
    for (uint64_t seed = 1; seed <= 100; ++seed) {
      schedule::Schedule sch = RandomGpuSchedule(w, seed);
      StatusOr<v1::GpuCandidateProgram> program = ProgramOf(sch, target);
      if (program.ok() && program->launches_size() > 1 && program->intermediate_bytes_size() > 0)
        return sch;
    }
    return std::nullopt;
  }

  // `nm -S` lines hold "ADDRESS SIZE TYPE NAME": whether `symbols` defines `name`.
  static bool Defines(const std::string& symbols, const std::string& name) {
    std::istringstream lines(symbols);
    for (std::string line; std::getline(lines, line);) {
      if (line.size() > name.size() &&
          line.compare(line.size() - name.size() - 1, std::string::npos, " " + name) == 0) {
        return true;
      }
    }
    return false;
  }

  // Every entry point a launcher of `program` named `name` defines: per kernel, and the whole.
  static void ExpectEntries(const std::string& symbols, const v1::GpuCandidateProgram& program,
                            const std::string& name, const std::string& prelude) {
    EXPECT_TRUE(Defines(symbols, name + "_" + prelude)) << symbols;
    EXPECT_TRUE(Defines(symbols, name)) << symbols;
    for (const v1::GpuKernelLaunch& launch : program.launches()) {
      EXPECT_TRUE(Defines(symbols, name + "_" + launch.function())) << launch.function() << "\n"
                                                                    << symbols;
    }
  }
};

TEST_F(GpuCompileCommandTest, NoRecordIsOneLineNotFound) {
  Record(GpuTiledMatmul(WorkloadOf("matmul(M=128,N=128,K=128)")),
         *target::ParseTarget(kRefusalTarget));
  CommandOutput out = Compile(kMatmul, kRefusalTarget, "mm");
  EXPECT_EQ(out.exit_code, 2) << out.all();
  EXPECT_THAT(out.err,
              HasSubstr("tuned: no record of matmul(M=256,N=256,K=256,dtype=float32) on '" +
                        target::ParseTarget(kRefusalTarget)->ToString() + "'"));
  EXPECT_THAT(out.err, HasSubstr("a GPU target has no default schedule to fall back to"));
  EXPECT_EQ(std::count(out.err.begin(), out.err.end(), '\n'), 1) << out.err;
}

TEST_F(GpuCompileCommandTest, NameMustBeACIdentifier) {
  Record(GpuTiledMatmul(WorkloadOf(kMatmul)), *target::ParseTarget(kRefusalTarget));
  CommandOutput out = Compile(kMatmul, kRefusalTarget, "2mm");
  EXPECT_EQ(out.exit_code, 2) << out.all();
  EXPECT_THAT(out.err, HasSubstr("--name '2mm' is not a C identifier"));
}

// A buffer named like a launcher's own parameter would give C that does not compile: refused in
// one line before the log is read.
TEST_F(GpuCompileCommandTest, ABufferNamedLikeALauncherParameterIsRefused) {
  ASSERT_NE(db::testing::OpenOrFail(Db()), nullptr);  // an empty log
  CommandOutput out =
      Compile("tdl: input stream: float32[64]; y[i: 64]: float32 = stream[i] * 2.0", kRefusalTarget, "twice");
  EXPECT_EQ(out.exit_code, 2) << out.all();
  EXPECT_THAT(out.err, HasSubstr("buffer 'stream' has the name of a launcher parameter or local"));
  EXPECT_EQ(std::count(out.err.begin(), out.err.end(), '\n'), 1) << out.err;
}

#ifdef TUNED_TEST_CUDA
// The cubin is SASS for the target's arch; the launcher compiles warning-free against cuda.h,
// links against the stub libcuda with nothing undefined, and embeds that cubin.
TEST_F(GpuCompileCommandTest, CudaWritesCubinAndLauncherOfTheBestRecord) {
  auto w = WorkloadOf(kMatmul);
  target::Target target = *target::ParseTarget(kCuda);
  schedule::Schedule sch = GpuTiledMatmul(w);
  Record(sch, target);
  CommandOutput out = Compile(kMatmul, kCuda, "mm");
  ASSERT_EQ(out.exit_code, 0) << out.all();
  EXPECT_THAT(out.out, HasSubstr("wrote " + dir_ + "/mm.cubin, " + dir_ + "/mm.c and " + dir_ +
                                 "/mm.h (record "));

  const std::string cubin = db::testing::ReadFile(dir_ + "/mm.cubin");
  StatusOr<std::string> arch = codegen::cuda::CubinArch(cubin);
  ASSERT_TRUE(arch.ok()) << arch.status().message();
  EXPECT_EQ(*arch, "sm_90");

  const std::string symbols =
      BuildLauncher("mm", "-I" TUNED_CUDA_INCLUDE_DIR, TUNED_CUDA_DRIVER_LIBRARY);
  StatusOr<v1::GpuCandidateProgram> program = ProgramOf(sch, target);
  ASSERT_TRUE(program.ok()) << program.status().message();
  ExpectEntries(symbols, *program, "mm", "load");
  std::ostringstream size;  // nm -S prints sizes as 16 hex digits
  size << std::hex << std::setw(16) << std::setfill('0') << cubin.size() << " R mm_cubin";
  EXPECT_THAT(symbols, HasSubstr(size.str()));
  EXPECT_TRUE(Defines(symbols, "mm_cubin_size")) << symbols;

  const std::string launcher = db::testing::ReadFile(dir_ + "/mm.c");
  EXPECT_THAT(launcher, HasSubstr("cuModuleLoadData(module, mm_cubin)"));
  EXPECT_THAT(launcher,
              HasSubstr("cuLaunchKernel(function, 8, 8, 1, 16, 16, 1, 0, stream, params, NULL)"));
  EXPECT_THAT(launcher, Not(HasSubstr("Synchronize")));  // everything stays on the caller's stream
}

// The device check's program (bench/gpu/launcher_check.c: load, run, verify, time a matmul
// launcher as a user's program would) compiles warning-free against a launcher `tuned compile`
// wrote and links into an executable against the stub libcuda; run here, it says in one line
// that there is no CUDA device, and on a GPU it prints its figures.
TEST_F(GpuCompileCommandTest, TheDeviceChecksLauncherProgramBuildsAgainstAWrittenLauncher) {
  auto w = WorkloadOf(kMatmul);
  Record(GpuTiledMatmul(w), *target::ParseTarget(kCuda));
  CommandOutput out = Compile(kMatmul, kCuda, "tuned_mm");
  ASSERT_EQ(out.exit_code, 0) << out.all();
  const std::string program = dir_ + "/launcher_check";
  std::string log;
  ASSERT_EQ(Shell("cc -std=c11 -Wall -Wextra -Werror -I" + dir_ + " -I" TUNED_CUDA_INCLUDE_DIR " " TUNED_SOURCE_DIR
                  "/bench/gpu/launcher_check.c " + dir_ + "/tuned_mm.c " TUNED_CUDA_DRIVER_LIBRARY " -lm -o " + program,
                  &log),
            0)
      << log;
  // Without a driver (the stub libcuda only) the program cannot even load: built and linked
  // is what this machine can check.
  void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (driver == nullptr) return;
  dlclose(driver);
  const int status = Shell(program + " 256 256 256", &log);
  if (status != 0) {  // a driver but no GPU: one line naming it
    EXPECT_THAT(log, HasSubstr("launcher_check: no CUDA device: "));
    EXPECT_EQ(std::count(log.begin(), log.end(), '\n'), 1) << log;
  } else {  // a GPU: the JSON line, the result right
    EXPECT_THAT(log, HasSubstr("\"launcher\":\"tuned_mm\""));
  }
}

// Several kernels with a global intermediate between them: one entry per kernel, and the
// intermediate allocated and freed on the caller's stream.
TEST_F(GpuCompileCommandTest, CudaLauncherRunsEveryKernelWithIntermediates) {
  auto w = WorkloadOf(kSoftmax);
  target::Target target = *target::ParseTarget(kCuda);
  std::optional<schedule::Schedule> sch = MultiKernelSchedule(w, target);
  ASSERT_TRUE(sch.has_value()) << "no random schedule of " << kSoftmax << " has several kernels";
  Record(*sch, target);
  CommandOutput out = Compile(kSoftmax, kCuda, "softmax_fn");
  ASSERT_EQ(out.exit_code, 0) << out.all();

  const std::string symbols =
      BuildLauncher("softmax_fn", "-I" TUNED_CUDA_INCLUDE_DIR, TUNED_CUDA_DRIVER_LIBRARY);
  StatusOr<v1::GpuCandidateProgram> program = ProgramOf(*sch, target);
  ASSERT_TRUE(program.ok()) << program.status().message();
  ExpectEntries(symbols, *program, "softmax_fn", "load");
  const std::string launcher = db::testing::ReadFile(dir_ + "/softmax_fn.c");
  EXPECT_THAT(launcher, HasSubstr("cuMemAllocAsync(&intermediate0, " +
                                  std::to_string(program->intermediate_bytes(0)) + ", stream)"));
  EXPECT_THAT(launcher, HasSubstr("cuMemFreeAsync(intermediate0, stream)"));
}
#else
TEST_F(GpuCompileCommandTest, CudaInABuildWithoutCudaIsOneLineError) {
  Record(GpuTiledMatmul(WorkloadOf(kMatmul)), *target::ParseTarget(kCuda));
  CommandOutput out = Compile(kMatmul, kCuda, "mm");
  EXPECT_EQ(out.exit_code, 1) << out.all();
  EXPECT_THAT(out.err, HasSubstr("this build has no CUDA support"));
  EXPECT_EQ(std::count(out.err.begin(), out.err.end(), '\n'), 1) << out.err;
}
#endif

#ifdef TUNED_TEST_OPENCL
// The OpenCL launcher (run on PoCL by tests/integration/gpu_tuning_test.cc) compiles
// warning-free and links against the OpenCL loader.
TEST_F(GpuCompileCommandTest, OpenclWritesSourceAndLauncherOfTheBestRecord) {
  auto w = WorkloadOf(kSoftmax);
  target::Target target = *target::ParseTarget("opencl");
  std::optional<schedule::Schedule> sch = MultiKernelSchedule(w, target);
  ASSERT_TRUE(sch.has_value()) << "no random schedule of " << kSoftmax << " has several kernels";
  Record(*sch, target);
  CommandOutput out = Compile(kSoftmax, "opencl", "softmax_cl");
  ASSERT_EQ(out.exit_code, 0) << out.all();
  EXPECT_THAT(out.out,
              HasSubstr("wrote " + dir_ + "/softmax_cl.cl, " + dir_ + "/softmax_cl.c and "));

  const std::string symbols =
      BuildLauncher("softmax_cl", "-DCL_TARGET_OPENCL_VERSION=120", "-lOpenCL");
  StatusOr<v1::GpuCandidateProgram> program = ProgramOf(*sch, target);
  ASSERT_TRUE(program.ok()) << program.status().message();
  ExpectEntries(symbols, *program, "softmax_cl", "build");
  EXPECT_EQ(db::testing::ReadFile(dir_ + "/softmax_cl.cl"), program->source());
}

// <tuned/compiler.h> writes the very files `tuned compile` writes, from the same log.
TEST_F(GpuCompileCommandTest, TheCompilerApiWritesWhatTunedCompileWrites) {
  auto w = WorkloadOf(kSoftmax);
  target::Target target = *target::ParseTarget("opencl");
  std::optional<schedule::Schedule> sch = MultiKernelSchedule(w, target);
  ASSERT_TRUE(sch.has_value());
  Record(*sch, target);
  CommandOutput out = Compile(kSoftmax, "opencl", "softmax_cl");
  ASSERT_EQ(out.exit_code, 0) << out.all();

  auto compiler = Compiler::Open({.db_path = Db(), .target = "opencl"});
  ASSERT_TRUE(compiler.ok()) << compiler.status().message();
  auto kernel = (*compiler)->GetGpuKernel(kSoftmax);
  ASSERT_TRUE(kernel.ok()) << kernel.status().message();
  std::filesystem::create_directories(dir_ + "/api");
  auto files = (*kernel)->WriteLauncher(dir_ + "/api/softmax_cl", "softmax_cl");
  ASSERT_TRUE(files.ok()) << files.status().message();
  for (const char* extension : {".cl", ".c", ".h"}) {
    const std::string written = db::testing::ReadFile(dir_ + "/api/softmax_cl" + extension);
    EXPECT_FALSE(written.empty()) << extension;
    EXPECT_EQ(written, db::testing::ReadFile(dir_ + "/softmax_cl" + extension)) << extension;
  }
}
#endif

}  // namespace
}  // namespace tuned::testing

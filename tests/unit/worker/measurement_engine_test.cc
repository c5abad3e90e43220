// The measurement engine on real candidates: results, errors, the protocol, concurrency.

#include "worker/measurement_engine.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <future>
#include <map>
#include <set>
#include <thread>

#include "compiler/ir/op_library.h"
#include "compiler/schedule/schedule.h"
#include "compiler/schedule/trace.h"
#include "tests/unit/worker/worker_test_util.h"
#include "worker/device_probe.h"
#include "common/exclusive_gate.h"
#include "worker/timing_protocol.h"

namespace tuned::worker {
namespace {

using ::testing::HasSubstr;
using testing::FastConfig;
using testing::kSmallMatmul;
using testing::MakeEngine;
using testing::MakeJob;

TEST(MeasurementEngine, DefaultScheduleIsOkWithSaneTimes) {
  auto engine = MakeEngine({.worker_id = "w1"});
  ASSERT_NE(engine, nullptr);
  StatusOr<v1::MeasureResult> result = engine->Measure(MakeJob(kSmallMatmul, "job-1"));
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->status(), v1::MEASURE_STATUS_OK) << result->error();
  EXPECT_EQ(result->job_id(), "job-1");
  EXPECT_EQ(result->worker_id(), "w1");
  ASSERT_EQ(result->repeat_seconds_size(), 3);
  for (double seconds : result->repeat_seconds()) {
    EXPECT_GT(seconds, 0);
    EXPECT_LT(seconds, 0.1);  // 65k flops
  }
  EXPECT_GT(result->median_seconds(), 0);
  EXPECT_GE(result->number(), 1u);
  // `number` grew until one repeat lasted at least min_repeat_ms (1 ms).
  EXPECT_GE(result->median_seconds() * result->number(), 0.5e-3);
  EXPECT_GT(result->build_seconds(), 0);
  // The run's wall time holds at least its timed repeats.
  EXPECT_GE(result->run_seconds(), 3 * result->median_seconds() * result->number() * 0.5);
  EXPECT_LE(result->max_error(), 1e-4);
  EXPECT_FALSE(result->device().model().empty());
  EXPECT_EQ(result->device().model(), engine->device().model());
}

TEST(MeasurementEngine, ScheduledTraceIsOk) {
  auto engine = MakeEngine();
  ASSERT_NE(engine, nullptr);
  const std::string spec = "matmul(M=64,N=48,K=40,dtype=float32)";
  StatusOr<v1::MeasureResult> result =
      engine->Measure(MakeJob(spec, "tiled", testing::TiledTrace(spec)));
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->status(), v1::MEASURE_STATUS_OK) << result->error();
  EXPECT_EQ(result->repeat_seconds_size(), 3);
}

TEST(MeasurementEngine, AConstantInputsPackedCopyIsMadeBeforeTheKernelRuns) {
  // B is a weight laid out at the root: the build reports the packed buffer, the run allocates
  // it and calls the prepack entry once, untimed. Without that the kernel would read zeros.
  const std::string key = "tdl: input A: float32[32, 40]; input B: const float32[40, 48]; "
                          "C[i: 32, j: 48]: float32 = sum[ri: 40](A[i, ri] * B[ri, j])";
  auto w = std::make_shared<const ir::Workload>(*ir::ParseWorkloadSpec(key));
  schedule::Schedule sch(w, 0);
  auto c = *sch.GetBlock("C");
  const int b = sch.state().ReadBuffers(sch.StageOf(c))[0]->name == "B" ? 0 : 1;
  ASSERT_TRUE(sch.CacheRead(c, b, "global").ok());
  auto loops = *sch.GetLoops(c);
  ASSERT_TRUE(sch.Parallel(loops[0]).ok());
  auto engine = MakeEngine();
  ASSERT_NE(engine, nullptr);
  StatusOr<v1::MeasureResult> result = engine->Measure(MakeJob(key, "packed", sch.trace()));
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->status(), v1::MEASURE_STATUS_OK) << result->error();
  EXPECT_LE(result->max_error(), 1e-5);
}

TEST(MeasurementEngine, AReMeasureLinksTheObjectBuiltForTheSameTraceAgain) {
  auto engine = MakeEngine();
  ASSERT_NE(engine, nullptr);
  const std::string spec = "matmul(M=64,N=48,K=40,dtype=float32)";
  std::vector<v1::MeasureResult> results;
  for (const char* id : {"first", "again"}) {
    StatusOr<v1::MeasureResult> result = engine->Measure(MakeJob(spec, id, testing::TiledTrace(spec)));
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    EXPECT_EQ(result->status(), v1::MEASURE_STATUS_OK) << result->error();
    EXPECT_GT(result->median_seconds(), 0);
    results.push_back(*result);
  }
  EXPECT_EQ(engine->stats().builds_reused, 1);
  // The second job only linked: a fraction of the first one's replay, lowering and LLVM.
  EXPECT_LT(results[1].build_seconds(), results[0].build_seconds());
  // Another trace is built.
  StatusOr<v1::MeasureResult> other = engine->Measure(MakeJob(spec, "default"));
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  EXPECT_EQ(engine->stats().builds_reused, 1);
}

TEST(MeasurementEngine, WithoutAnObjectCacheEveryJobIsBuilt) {
  auto engine = MakeEngine({.object_cache_bytes = 0});
  ASSERT_NE(engine, nullptr);
  for (const char* id : {"first", "again"}) {
    StatusOr<v1::MeasureResult> result = engine->Measure(MakeJob(kSmallMatmul, id));
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    EXPECT_EQ(result->status(), v1::MEASURE_STATUS_OK) << result->error();
  }
  EXPECT_EQ(engine->stats().builds_reused, 0);
}

TEST(MeasurementEngine, UserDefinitionIsRebuiltFromItsKeyAndVerified) {
  auto engine = MakeEngine();
  ASSERT_NE(engine, nullptr);
  // A definition key, as a task stores it: the worker rebuilds the workload from the text alone.
  const std::string key =
      "tdl: input X: float32[24, 16]; input g: float32[16]; row_max[i: 24]: float32 = "
      "max[ri: 16](X[i, ri]); y[i: 24, j: 16]: float32 = exp(X[i, j] - row_max[i]) * g[j]";
  StatusOr<v1::MeasureResult> result = engine->Measure(MakeJob(key, "tdl", testing::TiledTrace(key)));
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->status(), v1::MEASURE_STATUS_OK) << result->error();
  EXPECT_LE(result->max_error(), 1e-4);
}

TEST(MeasurementEngine, CompiledReferenceVerifiesLargeWorkloads) {
  // With the evaluator limit at 0 every workload is checked against its compiled default
  // schedule, the path of workloads too big for the float64 evaluator.
  auto engine = MakeEngine({.reference_max_evaluator_flops = 0});
  ASSERT_NE(engine, nullptr);
  const std::string spec = "matmul(M=64,N=48,K=40,dtype=float32)";
  StatusOr<v1::MeasureResult> result =
      engine->Measure(MakeJob(spec, "big", testing::TiledTrace(spec)));
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->status(), v1::MEASURE_STATUS_OK) << result->error();
  EXPECT_LE(result->max_error(), 1e-4);
  EXPECT_EQ(engine->stats().reference_computations, 1);
}

TEST(MeasurementEngine, CompiledReferencesOfWorkloadsWithOneDefaultTraceAreBuiltApart) {
  // Two matmuls of different shapes have the same default-schedule trace: the reference job
  // carries its workload, or the object cache would hand the second the first one's kernel
  // (a 7x7 stem's reference once ran on a 3x3 convolution's buffers and corrupted its heap).
  auto engine = MakeEngine({.reference_max_evaluator_flops = 0});
  ASSERT_NE(engine, nullptr);
  for (const std::string spec : {"matmul(M=64,N=48,K=40,dtype=float32)",
                                 "matmul(M=24,N=16,K=8,dtype=float32)"}) {
    StatusOr<v1::MeasureResult> result = engine->Measure(MakeJob(spec, spec));
    ASSERT_TRUE(result.ok()) << spec << ": " << result.status().ToString();
    EXPECT_EQ(result->status(), v1::MEASURE_STATUS_OK) << spec << ": " << result->error();
    EXPECT_LE(result->max_error(), 1e-4) << spec;
  }
  EXPECT_EQ(engine->stats().reference_computations, 2);
}

TEST(MeasurementEngine, AFloat32SumThatCancelsIsJudgedAgainstItsTerms) {
  // A serial float32 sum of 2^20 values in [-1, 1] (the unscheduled program) rounds at every
  // step; on seeds whose values cancel, that rounding exceeded 1e-4 of the small result, and a
  // correct kernel was WRONG_RESULT. Against the terms' spread (about 590) it is far within.
  auto engine = MakeEngine();
  ASSERT_NE(engine, nullptr);
  const std::string spec = "tdl: input a: float32[1, 1048576]; s[i: 1, j: 1]: float32 = sum[k: 1048576](a[i, k])";
  for (uint32_t seed = 1; seed <= 8; ++seed) {
    v1::MeasureJob job = MakeJob(spec, "sum-" + std::to_string(seed));
    job.mutable_config()->set_seed(seed);
    StatusOr<v1::MeasureResult> result = engine->Measure(job);
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    EXPECT_EQ(result->status(), v1::MEASURE_STATUS_OK) << "seed " << seed << ": " << result->error();
    EXPECT_GT(result->max_error(), 0) << "seed " << seed << ": a float32 sum of 2^20 terms rounds";
  }
}

TEST(MeasurementEngine, ReferenceIsComputedOncePerWorkloadAndSeed) {
  auto engine = MakeEngine();
  ASSERT_NE(engine, nullptr);
  for (int i = 0; i < 3; ++i) {
    StatusOr<v1::MeasureResult> result = engine->Measure(MakeJob(kSmallMatmul, "same"));
    ASSERT_TRUE(result.ok());
  }
  EXPECT_EQ(engine->stats().reference_computations, 1);
  v1::MeasureJob other_seed = MakeJob(kSmallMatmul, "seed");
  other_seed.mutable_config()->set_seed(7);
  ASSERT_TRUE(engine->Measure(other_seed).ok());
  EXPECT_EQ(engine->stats().reference_computations, 2);
}

TEST(MeasurementEngine, InvalidTraceIsCompileError) {
  auto engine = MakeEngine();
  ASSERT_NE(engine, nullptr);
  // Replay fails: no block of that name.
  v1::MeasureJob job = MakeJob(kSmallMatmul, "bad-block");
  schedule::Trace trace;
  trace.instructions.push_back({schedule::InstKind::kGetBlock, {}, {}, {}, {"no_such_block"}, {0}});
  schedule::TraceToProto(trace, job.mutable_trace());
  StatusOr<v1::MeasureResult> result = engine->Measure(job);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->status(), v1::MEASURE_STATUS_COMPILE_ERROR);
  EXPECT_THAT(result->error(), HasSubstr("replay"));
  EXPECT_THAT(result->error(), HasSubstr("no_such_block"));
  EXPECT_EQ(result->repeat_seconds_size(), 0);

  // Structurally invalid: an instruction uses an RV nobody defined.
  v1::MeasureJob undefined = MakeJob(kSmallMatmul, "bad-rv");
  schedule::Trace dangling;
  dangling.instructions.push_back(
      {schedule::InstKind::kGetLoops, {schedule::TraceArg::RV(42)}, {}, {}, {}, {1}});
  schedule::TraceToProto(dangling, undefined.mutable_trace());
  result = engine->Measure(undefined);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->status(), v1::MEASURE_STATUS_COMPILE_ERROR);
  EXPECT_THAT(result->error(), HasSubstr("invalid trace"));

  // The engine goes on.
  result = engine->Measure(MakeJob(kSmallMatmul, "after"));
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->status(), v1::MEASURE_STATUS_OK) << result->error();
}

TEST(MeasurementEngine, RefusesJobsForTargetsItCannotRun) {
  auto engine = MakeEngine();
  ASSERT_NE(engine, nullptr);
  EXPECT_EQ(engine->target().kind(), v1::TARGET_KIND_LLVM_CPU);
  EXPECT_THAT(engine->target().target(), HasSubstr("llvm"));

  v1::MeasureJob cuda = MakeJob(kSmallMatmul, "cuda");
  cuda.mutable_target()->set_target("cuda -arch=sm_90");
  cuda.mutable_target()->set_kind(v1::TARGET_KIND_CUDA);
  StatusOr<v1::MeasureResult> result = engine->Measure(cuda);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(result.status().message(), HasSubstr("CUDA"));

  v1::MeasureJob other_arch = MakeJob(kSmallMatmul, "arm");
  other_arch.mutable_target()->set_target("llvm -mtriple=aarch64-linux-gnu -mcpu=neoverse-v1");
  result = engine->Measure(other_arch);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(result.status().message(), HasSubstr("cannot run on this worker"));

  v1::MeasureJob garbage = MakeJob(kSmallMatmul, "garbage");
  garbage.mutable_target()->set_target("llvm -mcpu=no-such-cpu");
  result = engine->Measure(garbage);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(result.status().message(), HasSubstr("no-such-cpu"));

  v1::MeasureJob own = MakeJob(kSmallMatmul, "own");
  *own.mutable_target() = engine->target();
  result = engine->Measure(own);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->status(), v1::MEASURE_STATUS_OK);
}

TEST(MeasurementEngine, RefusesMalformedWorkloads) {
  auto engine = MakeEngine();
  ASSERT_NE(engine, nullptr);
  v1::MeasureJob bad_hash = MakeJob(kSmallMatmul, "hash");
  bad_hash.mutable_workload()->set_key_sha256(std::string(64, '0'));
  StatusOr<v1::MeasureResult> result = engine->Measure(bad_hash);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(result.status().message(), HasSubstr("key_sha256"));

  v1::MeasureJob bad_key = MakeJob(kSmallMatmul, "key");
  bad_key.mutable_workload()->set_key("matmul(M=0)");
  bad_key.mutable_workload()->clear_key_sha256();
  result = engine->Measure(bad_key);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);

  v1::MeasureJob bad_protocol = MakeJob(kSmallMatmul, "protocol");
  bad_protocol.mutable_config()->set_protocol_version(kProtocolVersion + 1);
  result = engine->Measure(bad_protocol);
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(result.status().message(), HasSubstr("protocol version"));
}

TEST(MeasurementEngine, SubmitAndDrainDeliverEveryResultOnce) {
  auto engine = MakeEngine({.build_slots = 2});
  ASSERT_NE(engine, nullptr);
  std::mutex mu;
  std::map<std::string, int> calls;
  std::map<std::string, v1::MeasureStatus> statuses;
  auto submit_some = [&](int base) {
    for (int i = 0; i < 4; ++i) {
      const std::string id = "j" + std::to_string(base + i);
      v1::MeasureJob job = MakeJob(i % 2 == 0 ? kSmallMatmul : "add(M=64,N=32)", id);
      if (i == 3) {
        schedule::Trace bad;
        bad.instructions.push_back({schedule::InstKind::kGetBlock, {}, {}, {}, {"nope"}, {0}});
        schedule::TraceToProto(bad, job.mutable_trace());
      }
      engine->Submit(job, [&, id](StatusOr<v1::MeasureResult> result) {
        std::lock_guard lock(mu);
        ++calls[id];
        statuses[id] = result.ok() ? result->status() : v1::MEASURE_STATUS_UNSPECIFIED;
      });
    }
  };
  std::thread a(submit_some, 0);
  std::thread b(submit_some, 10);
  a.join();
  b.join();
  engine->Drain();
  std::lock_guard lock(mu);
  ASSERT_EQ(calls.size(), 8u);
  for (const auto& [id, n] : calls) EXPECT_EQ(n, 1) << id;
  for (int base : {0, 10}) {
    for (int i = 0; i < 3; ++i) {
      EXPECT_EQ(statuses["j" + std::to_string(base + i)], v1::MEASURE_STATUS_OK);
    }
    EXPECT_EQ(statuses["j" + std::to_string(base + 3)], v1::MEASURE_STATUS_COMPILE_ERROR);
  }
  EXPECT_EQ(engine->stats().results, 8u);
  engine->Drain();  // nothing outstanding: returns at once
}

TEST(MeasurementEngine, MeasureFromACallbackFailsInsteadOfDeadlocking) {
  auto engine = MakeEngine();
  ASSERT_NE(engine, nullptr);
  std::promise<Status> inner;
  engine->Submit(MakeJob(kSmallMatmul, "outer"), [&](StatusOr<v1::MeasureResult>) {
    inner.set_value(engine->Measure(MakeJob(kSmallMatmul, "inner")).status());
  });
  engine->Drain();
  Status status = inner.get_future().get();
  EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition);
}

TEST(MeasurementEngine, RejectsAnUnknownEngineTarget) {
  StatusOr<std::unique_ptr<MeasurementEngine>> engine =
      CreateMeasurementEngine({.target = "llvm -mcpu=bogus"});
  ASSERT_FALSE(engine.ok());
  EXPECT_THAT(engine.status().message(), HasSubstr("bogus"));
}

TEST(MeasureConfig, DefaultsCarryTheProtocolVersion) {
  v1::MeasureConfig config = DefaultMeasureConfig();
  EXPECT_EQ(config.protocol_version(), kProtocolVersion);
  EXPECT_GE(config.repeat(), 3u);
  EXPECT_GT(config.min_repeat_ms(), 0);
  EXPECT_TRUE(config.verify());
  EXPECT_GT(config.run_timeout_ms(), 0u);

  StatusOr<v1::MeasureConfig> unset = ResolveMeasureConfig(v1::MeasureConfig());
  ASSERT_TRUE(unset.ok());
  EXPECT_EQ(unset->protocol_version(), kProtocolVersion);
  EXPECT_EQ(unset->repeat(), config.repeat());

  v1::MeasureConfig zero_repeat = config;
  zero_repeat.set_repeat(0);
  EXPECT_THAT(ResolveMeasureConfig(zero_repeat).status().message(), HasSubstr("repeat"));
  v1::MeasureConfig no_timeout = config;
  no_timeout.set_run_timeout_ms(0);
  EXPECT_FALSE(ResolveMeasureConfig(no_timeout).ok());
}

TEST(MeasureConfig, AbsentFieldsTakeTheirDefaultsOneByOne) {
  v1::MeasureConfig partial;  // what an old or careless client sends: some fields only
  partial.set_repeat(2);
  partial.set_warmup(0);  // an explicit zero is kept
  StatusOr<v1::MeasureConfig> resolved = ResolveMeasureConfig(partial);
  ASSERT_TRUE(resolved.ok()) << resolved.status().ToString();
  const v1::MeasureConfig defaults = DefaultMeasureConfig();
  EXPECT_EQ(resolved->repeat(), 2u);
  EXPECT_EQ(resolved->warmup(), 0u);
  EXPECT_EQ(resolved->protocol_version(), kProtocolVersion);
  EXPECT_TRUE(resolved->verify());  // not turned off by being left out
  EXPECT_EQ(resolved->build_timeout_ms(), defaults.build_timeout_ms());
  EXPECT_EQ(resolved->run_timeout_ms(), defaults.run_timeout_ms());
  EXPECT_EQ(resolved->min_repeat_ms(), defaults.min_repeat_ms());
  EXPECT_EQ(resolved->seed(), defaults.seed());
  v1::MeasureConfig unverified;
  unverified.set_verify(false);
  EXPECT_FALSE(ResolveMeasureConfig(unverified)->verify());
}

TEST(TimingProtocol, CoefficientOfVariationOfRepeats) {
  EXPECT_EQ(CoefficientOfVariation({1.0}), 0);
  EXPECT_EQ(CoefficientOfVariation({2.0, 2.0, 2.0}), 0);
  EXPECT_NEAR(CoefficientOfVariation({1.0, 3.0}), std::sqrt(2.0) / 2.0, 1e-12);
}

TEST(MeasurementEngine, ResultsCarryTheSpreadOfTheirRepeats) {
  auto engine = MakeEngine();
  ASSERT_NE(engine, nullptr);
  StatusOr<v1::MeasureResult> result = engine->Measure(MakeJob(kSmallMatmul, "cv"));
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  ASSERT_EQ(result->status(), v1::MEASURE_STATUS_OK) << result->error();
  std::vector<double> repeats(result->repeat_seconds().begin(), result->repeat_seconds().end());
  EXPECT_DOUBLE_EQ(result->repeat_cv(), CoefficientOfVariation(repeats));
  EXPECT_GT(result->repeat_cv(), 0);  // three timed repeats never agree to the nanosecond
}

TEST(TimingProtocol, RunsColdWhenTheBuffersExceedTheLastLevelCache) {
  const uint64_t llc = uint64_t{32} << 20;
  v1::MeasureConfig config = DefaultMeasureConfig();  // flush_cache absent: decided by size
  EXPECT_FALSE(config.has_flush_cache());
  EXPECT_TRUE(RunsCold(config, llc + 1, llc));
  EXPECT_FALSE(RunsCold(config, llc, llc));
  EXPECT_FALSE(RunsCold(config, llc + 1, 0));  // an unknown cache never makes a run cold
  config.set_flush_cache(false);
  EXPECT_FALSE(RunsCold(config, 4 * llc, llc));
  config.set_flush_cache(true);
  EXPECT_TRUE(RunsCold(config, 1, llc));
  v1::MeasureConfig version1 = DefaultMeasureConfig();
  version1.set_protocol_version(1);  // before cold runs were automatic
  EXPECT_FALSE(RunsCold(version1, 4 * llc, llc));
}

// Two 4-byte-element inputs and an output, together past the last-level cache: an add whose
// every repeat must start cold (DESIGN.md's measurement protocol, version 2).
std::string AddLargerThan(uint64_t bytes) {
  const uint64_t rows = bytes / (3 * 4 * 1024) + 1;
  return "add(M=" + std::to_string(rows) + ",N=1024,dtype=float32)";
}

TEST(MeasurementEngine, AKernelLargerThanTheLastLevelCacheIsTimedColdOneRunAtATime) {
  auto engine = MakeEngine();
  ASSERT_NE(engine, nullptr);
  const v1::DeviceInfo& device = engine->device();
  const uint64_t llc = device.l3_cache_bytes() > 0 ? device.l3_cache_bytes() : device.l2_cache_bytes();
  if (llc == 0) GTEST_SKIP() << "this machine hides its cache sizes (no /sys/devices/system/cpu/cpu0/cache)";
  v1::MeasureJob large = MakeJob(AddLargerThan(llc), "large");
  StatusOr<v1::MeasureResult> cold = engine->Measure(large);
  ASSERT_TRUE(cold.ok()) << cold.status().ToString();
  ASSERT_EQ(cold->status(), v1::MEASURE_STATUS_OK) << cold->error();
  EXPECT_TRUE(cold->cold());
  EXPECT_EQ(cold->number(), 1u);  // no calibration: a second run would find the data cached
  EXPECT_EQ(cold->repeat_seconds_size(), 3);

  large.mutable_config()->set_flush_cache(false);  // asked for warm runs: calibrated as before
  large.set_job_id("large-warm");
  StatusOr<v1::MeasureResult> warm = engine->Measure(large);
  ASSERT_TRUE(warm.ok()) << warm.status().ToString();
  ASSERT_EQ(warm->status(), v1::MEASURE_STATUS_OK) << warm->error();
  EXPECT_FALSE(warm->cold());

  StatusOr<v1::MeasureResult> small = engine->Measure(MakeJob(kSmallMatmul, "small"));
  ASSERT_TRUE(small.ok()) << small.status().ToString();
  ASSERT_EQ(small->status(), v1::MEASURE_STATUS_OK) << small->error();
  EXPECT_FALSE(small->cold());
  EXPECT_GT(small->number(), 1u);  // 65k flops: calibration needs many runs per millisecond

  v1::MeasureJob forced = MakeJob(kSmallMatmul, "small-cold");
  forced.mutable_config()->set_flush_cache(true);
  StatusOr<v1::MeasureResult> forced_cold = engine->Measure(forced);
  ASSERT_TRUE(forced_cold.ok()) << forced_cold.status().ToString();
  ASSERT_EQ(forced_cold->status(), v1::MEASURE_STATUS_OK) << forced_cold->error();
  EXPECT_TRUE(forced_cold->cold());
  EXPECT_EQ(forced_cold->number(), 1u);
}

TEST(MeasureConfig, TheWorkerRunsJobsOfTheOlderProtocolAndRefusesOthers) {
  v1::MeasureConfig version1;
  version1.set_protocol_version(1);
  StatusOr<v1::MeasureConfig> resolved = ResolveMeasureConfig(version1);
  ASSERT_TRUE(resolved.ok()) << resolved.status().ToString();
  EXPECT_EQ(resolved->protocol_version(), 1u);
  v1::MeasureConfig future;
  future.set_protocol_version(kProtocolVersion + 1);
  EXPECT_THAT(ResolveMeasureConfig(future).status().message(), HasSubstr("versions 1 to 2"));
}

TEST(TimingProtocol, MedianOfOddAndEvenCounts) {
  EXPECT_EQ(Median({3, 1, 2}), 2);
  EXPECT_EQ(Median({4, 1, 3, 2}), 2.5);
  EXPECT_EQ(Median({}), 0);
}

TEST(DeviceProbe, DescribesThisMachine) {
  StatusOr<target::Target> host = codegen::HostCpuTarget();
  ASSERT_TRUE(host.ok());
  v1::DeviceInfo device = ProbeCpuDevice(*host);
  EXPECT_FALSE(device.model().empty());
  EXPECT_EQ(device.num_cores(), static_cast<uint32_t>(host->num_cores));
  EXPECT_THAT(device.toolkit_version(), HasSubstr("LLVM"));
  EXPECT_GT(device.memory_bytes(), 0u);
}

TEST(ExclusiveGate, ExclusiveNeverOverlapsShared) {
  ExclusiveGate gate;
  std::atomic<int> shared_inside{0};
  std::atomic<bool> overlap{false};
  std::atomic<bool> stop{false};
  std::vector<std::thread> builders;
  for (int i = 0; i < 3; ++i) {
    builders.emplace_back([&] {
      while (!stop) {
        ExclusiveGate::Shared share(gate);
        ++shared_inside;
        std::this_thread::yield();
        --shared_inside;
      }
    });
  }
  for (int i = 0; i < 200; ++i) {
    ExclusiveGate::Exclusive exclusive(gate);  // must get in despite the steady builders
    if (shared_inside.load() != 0) overlap = true;
  }
  stop = true;
  for (std::thread& t : builders) t.join();
  EXPECT_FALSE(overlap);
}

}  // namespace
}  // namespace tuned::worker

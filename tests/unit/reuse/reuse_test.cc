// Apply-history-best through the public API on a real tuning log (an SQLite file, and a schema on
// the PostgreSQL test server): the recorded schedule is used when present, the default (with a
// reason) when not, broken records are skipped.

#include <filesystem>
#include <random>

#include <gtest/gtest.h>

#include "common/sha256.h"
#include "common/version.h"
#include "compiler/codegen/llvm/codegen_llvm.h"
#include "compiler/codegen/llvm/cpu_target.h"
#include "compiler/ir/evaluator.h"
#include "compiler/ir/ir_printer.h"
#include "compiler/ir/op_library.h"
#include "compiler/lower/pipeline.h"
#include "compiler/reuse/apply_history_best.h"
#include "compiler/reuse/record_source.h"
#include "compiler/runtime/aligned_buffer.h"
#include "compiler/schedule/schedule.h"
#include "proto/measure_config.h"
#include "tests/unit/tuning_db/backend_test_util.h"
#include "tuned/compiler.h"
#include "tuning_db/database.h"
#include "tuning_db/trace_hash.h"

namespace tuned {
namespace {

class ReuseTest : public ::testing::TestWithParam<db::testing::Backend> {
 protected:
  void SetUp() override {
    TUNED_SKIP_UNLESS_BACKEND(GetParam());
    dir_ = std::filesystem::temp_directory_path() /
           ("tuned_reuse_" + std::to_string(::getpid()) + "_" + std::to_string(std::random_device{}()));
    std::filesystem::create_directories(dir_);
    db_path_ = (dir_ / "tuned.db").string();
    if (GetParam() == db::testing::Backend::kPostgres) {
      log_ = std::make_unique<db::testing::ScratchLog>(GetParam());
      db_path_ = log_->location();
    }
    auto db = db::OpenDatabase(db_path_);
    ASSERT_TRUE(db.ok()) << db.status().message();
    db_ = std::move(db).value();
    host_ = codegen::HostCpuTarget()->ToString();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // A tiled, parallel schedule of `spec` with the given tile (a trace the log can hold).
  v1::Trace TiledTrace(const std::string& spec, int64_t tile) {
    auto w = std::make_shared<const ir::Workload>(*ir::ParseWorkloadSpec(spec));
    schedule::Schedule sch(w, 0);
    auto c = *sch.GetBlock("C");
    auto loops = *sch.GetLoops(c);
    auto tiles = *sch.SamplePerfectTile(loops[1], 2, 64, std::vector<int64_t>{w->output_stage().axes[1].extent / tile, tile});
    auto j = *sch.Split(loops[1], {tiles[0], tiles[1]});
    EXPECT_TRUE(sch.Parallel(loops[0]).ok());
    EXPECT_TRUE(sch.Vectorize(j[1]).ok());
    v1::Trace proto;
    schedule::TraceToProto(sch.trace(), &proto);
    return proto;
  }

  int64_t AddRecord(const std::string& spec, const v1::Trace& trace, const std::string& target,
                    double median, const std::string& toolkit = "", uint32_t protocol = 0,
                    uint32_t codegen = 0) {
    ir::Workload w = *ir::ParseWorkloadSpec(spec);
    v1::TuningRecord r;
    r.mutable_workload()->set_key(w.key());
    r.mutable_workload()->set_key_sha256(w.key_sha256());
    r.mutable_workload()->set_op(w.op());
    r.mutable_workload()->set_flops(w.flops());
    r.mutable_target()->set_target(target);
    *r.mutable_trace() = trace;
    r.mutable_result()->set_status(v1::MEASURE_STATUS_OK);
    r.mutable_result()->add_repeat_seconds(median);
    r.mutable_result()->set_median_seconds(median);
    r.mutable_result()->set_worker_id("test");
    r.mutable_result()->mutable_device()->set_toolkit_version(toolkit);
    if (protocol != 0) r.mutable_config()->set_protocol_version(protocol);  // absent: version 1
    r.set_codegen_version(codegen);  // 0: unknown, matched by every code generation
    r.set_created_unix_ms(1000 + (++seq_));
    auto inserted = db_->InsertRecords({&r, 1});
    EXPECT_TRUE(inserted.ok()) << inserted.status().message();
    return inserted->record_ids[0];
  }

  // Runs the kernel on random inputs and compares with the float64 reference.
  void ExpectComputesReference(const Kernel& kernel, const std::string& spec) {
    ir::Workload w = *ir::ParseWorkloadSpec(spec);
    auto inputs = ir::RandomInputs(w, 4);
    auto reference = ir::EvaluateReference(w, inputs);
    std::vector<std::vector<float>> storage;
    std::vector<runtime::AlignedBuffer> buffers;
    std::vector<void*> args;
    for (const ir::Buffer& b : w.arguments()) {
      buffers.emplace_back(b->num_elements() * sizeof(float));
      float* data = static_cast<float*>(buffers.back().data());
      if (inputs.count(b->name)) {
        for (size_t i = 0; i < inputs[b->name].size(); ++i) data[i] = float(inputs[b->name][i]);
      }
      args.push_back(data);
    }
    ASSERT_TRUE(kernel.Run(args).ok());
    const float* out = static_cast<const float*>(args.back());
    std::vector<double> actual(out, out + w.output_stage().output->num_elements());
    EXPECT_LE(ir::MaxRelativeError(actual, reference->at(w.output_stage().name)), 1e-4);
  }

  std::filesystem::path dir_;
  std::string db_path_;
  std::unique_ptr<db::testing::ScratchLog> log_;  // PostgreSQL: the schema, dropped last.
  std::unique_ptr<db::Database> db_;
  std::string host_;
  int seq_ = 0;
};

INSTANTIATE_TEST_SUITE_P(Backends, ReuseTest, ::testing::ValuesIn(db::testing::AllBackends()),
                         [](const auto& info) { return db::testing::BackendName(info.param); });

constexpr char kSpec[] = "matmul(M=32,N=64,K=16)";

TEST_P(ReuseTest, RecordPresentGivesTheRecordedScheduleAndCorrectResults) {
  AddRecord(kSpec, TiledTrace(kSpec, 8), host_, 2e-5);
  v1::Trace best = TiledTrace(kSpec, 16);
  int64_t best_id = AddRecord(kSpec, best, host_, 1e-5);
  auto compiler = Compiler::Open({db_path_});
  ASSERT_TRUE(compiler.ok()) << compiler.status().message();
  auto kernel = (*compiler)->GetKernel(kSpec);
  ASSERT_TRUE(kernel.ok()) << kernel.status().message();
  EXPECT_TRUE((*kernel)->from_record());
  EXPECT_EQ((*kernel)->record_id(), best_id);
  EXPECT_EQ((*kernel)->trace_hash(), db::TraceHash(best));
  EXPECT_TRUE((*kernel)->fallback_reason().empty());
  ExpectComputesReference(**kernel, kSpec);
  // The same workload, spelled differently, is a cache hit.
  auto again = (*compiler)->GetKernel("matmul(K=16, N=64, M=32)");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->get(), kernel->get());
  EXPECT_EQ((*compiler)->stats().cache_hits, 1);
  EXPECT_EQ((*compiler)->stats().record_hits, 1);
}

// A matmul whose B is a model's weight, and a schedule that lays B out at the root: the
// kernel's prepack entry copies it once.
constexpr char kConstantB[] = "tdl: input A: float32[32, 16]; input B: const float32[16, 64]; "
                              "C[i: 32, j: 64]: float32 = sum[ri: 16](A[i, ri] * B[ri, j])";

v1::Trace PackedBTrace() {
  auto w = std::make_shared<const ir::Workload>(*ir::ParseWorkloadSpec(kConstantB));
  schedule::Schedule sch(w, 0);
  auto c = *sch.GetBlock("C");
  std::vector<ir::Buffer> reads = sch.state().ReadBuffers(sch.StageOf(c));
  const int b = reads[0]->name == "B" ? 0 : 1;
  EXPECT_TRUE(sch.CacheRead(c, b, "global").ok());
  auto loops = *sch.GetLoops(c);
  EXPECT_TRUE(sch.Parallel(loops[0]).ok());
  EXPECT_TRUE(sch.Vectorize(loops[1]).ok());
  v1::Trace proto;
  schedule::TraceToProto(sch.trace(), &proto);
  return proto;
}

TEST_P(ReuseTest, AConstantInputIsPackedAtTheFirstRunWithItsAddress) {
  AddRecord(kConstantB, PackedBTrace(), host_, 1e-5);
  auto compiler = Compiler::Open({db_path_});
  ASSERT_TRUE(compiler.ok()) << compiler.status().message();
  auto kernel = (*compiler)->GetKernel(kConstantB);
  ASSERT_TRUE(kernel.ok()) << kernel.status().message();
  ASSERT_TRUE((*kernel)->from_record());
  ir::Workload w = *ir::ParseWorkloadSpec(kConstantB);
  auto inputs = ir::RandomInputs(w, 4);
  std::vector<runtime::AlignedBuffer> buffers;
  for (const ir::Buffer& b : w.arguments()) buffers.emplace_back(b->num_elements() * sizeof(float));
  auto fill = [&](runtime::AlignedBuffer& buffer, const std::vector<double>& values) {
    for (size_t i = 0; i < values.size(); ++i) buffer.as<float>()[i] = float(values[i]);
  };
  fill(buffers[0], inputs["A"]);
  fill(buffers[1], inputs["B"]);
  auto run = [&](runtime::AlignedBuffer& b) {
    std::vector<void*> args = {buffers[0].data(), b.data(), buffers[2].data()};
    Status status = (*kernel)->Run(args);
    EXPECT_TRUE(status.ok()) << status.message();
    const float* out = buffers[2].as<float>();
    return std::vector<double>(out, out + w.output_stage().output->num_elements());
  };
  auto expected = ir::EvaluateReference(w, inputs)->at("C");
  EXPECT_LE(ir::MaxRelativeError(run(buffers[1]), expected), 1e-5);
  // New values at the same address are not seen: the packed copy is the first run's (the
  // contract of a constant input). Another address is packed anew.
  for (double& v : inputs["B"]) v = -v;
  fill(buffers[1], inputs["B"]);
  EXPECT_LE(ir::MaxRelativeError(run(buffers[1]), expected), 1e-5);
  runtime::AlignedBuffer other(buffers[1].size());
  fill(other, inputs["B"]);
  EXPECT_LE(ir::MaxRelativeError(run(other), ir::EvaluateReference(w, inputs)->at("C")), 1e-5);
  EXPECT_EQ((*kernel)->Run({buffers[0].data(), buffers[2].data()}).code(), StatusCode::kInvalidArgument);
}

TEST_P(ReuseTest, ARecordOfTheWorkloadWithoutItsConstantsMarkedStillServesIt) {
  // Logs written before model weights were marked constant hold the same tasks under keys
  // without `const`: their schedules still serve the marked workload.
  const std::string unmarked = "tdl: input A: float32[32, 16]; input B: float32[16, 64]; "
                               "C[i: 32, j: 64]: float32 = sum[ri: 16](A[i, ri] * B[ri, j])";
  v1::Trace trace = TiledTrace(unmarked, 16);
  int64_t id = AddRecord(unmarked, trace, host_, 1e-5);
  auto compiler = Compiler::Open({db_path_});
  ASSERT_TRUE(compiler.ok()) << compiler.status().message();
  auto kernel = (*compiler)->GetKernel(kConstantB);
  ASSERT_TRUE(kernel.ok()) << kernel.status().message();
  EXPECT_TRUE((*kernel)->from_record());
  EXPECT_EQ((*kernel)->record_id(), id);
  ASSERT_EQ((*kernel)->warnings().size(), 1u);
  EXPECT_NE((*kernel)->warnings()[0].find("without its constant inputs marked"), std::string::npos)
      << (*kernel)->warnings()[0];
  ExpectComputesReference(**kernel, kConstantB);
}

TEST_P(ReuseTest, NoRecordFallsBackToTheDefaultScheduleAndSaysWhy) {
  auto compiler = Compiler::Open({db_path_});
  ASSERT_TRUE(compiler.ok());
  auto kernel = (*compiler)->GetKernel(kSpec);
  ASSERT_TRUE(kernel.ok()) << kernel.status().message();
  EXPECT_FALSE((*kernel)->from_record());
  EXPECT_NE((*kernel)->fallback_reason().find("no workload"), std::string::npos)
      << (*kernel)->fallback_reason();
  ASSERT_FALSE((*kernel)->warnings().empty());
  EXPECT_NE((*kernel)->warnings()[0].find("using the default schedule"), std::string::npos);
  EXPECT_EQ((*compiler)->stats().fallbacks, 1);
  ExpectComputesReference(**kernel, kSpec);
}

TEST_P(ReuseTest, FallbackIsTheDefaultScheduleTrace) {
  // The one default schedule (compiler/lower/pipeline.h): what tuning tasks measure first.
  auto source = reuse::OpenLocalRecordSource(db_path_);
  ASSERT_TRUE(source.ok()) << source.status().message();
  auto workload = std::make_shared<const ir::Workload>(*ir::ParseWorkloadSpec(kSpec));
  reuse::SelectOptions options;
  options.target = host_;
  auto selection = reuse::SelectKernel(*workload, **source, options);
  ASSERT_TRUE(selection.ok()) << selection.status().message();
  ASSERT_FALSE(selection->from_record);
  auto trace = lower::DefaultScheduleTrace(workload);
  ASSERT_TRUE(trace.ok());
  auto expected = lower::LowerTrace(workload, *trace);
  ASSERT_TRUE(expected.ok());
  EXPECT_EQ(ir::ToString(selection->func.body), ir::ToString(expected->body));
  EXPECT_NE(ir::ToString(selection->func.body), ir::ToString(lower::LowerUnscheduled(workload)->body))
      << "the fallback is not the unscheduled program";
}

TEST_P(ReuseTest, BrokenRecordIsSkippedForTheNextBest) {
  // A trace sampled for another shape: its tile decision no longer divides this loop.
  int64_t broken = AddRecord(kSpec, TiledTrace("matmul(M=32,N=48,K=16)", 16), host_, 1e-6);
  int64_t good = AddRecord(kSpec, TiledTrace(kSpec, 8), host_, 3e-5);
  auto compiler = Compiler::Open({db_path_});
  auto kernel = (*compiler)->GetKernel(kSpec);
  ASSERT_TRUE(kernel.ok()) << kernel.status().message();
  EXPECT_EQ((*kernel)->record_id(), good);
  ASSERT_FALSE((*kernel)->warnings().empty());
  EXPECT_NE((*kernel)->warnings()[0].find("record " + std::to_string(broken) + " skipped"),
            std::string::npos)
      << (*kernel)->warnings()[0];
  ExpectComputesReference(**kernel, kSpec);
}

TEST_P(ReuseTest, ARecordTimedWithAnotherLlvmIsNotUsedAndTheReasonSaysSo) {
  // Its time belongs to the code another LLVM generated, not to what this build would make.
  AddRecord(kSpec, TiledTrace(kSpec, 16), host_, 1e-6, "LLVM 1.0.0");
  auto compiler = Compiler::Open({db_path_});
  ASSERT_TRUE(compiler.ok()) << compiler.status().message();
  auto kernel = (*compiler)->GetKernel(kSpec);
  ASSERT_TRUE(kernel.ok()) << kernel.status().message();
  EXPECT_FALSE((*kernel)->from_record());
  EXPECT_NE((*kernel)->fallback_reason().find("with toolkit '" + codegen::LlvmToolkitVersion() + "'"),
            std::string::npos)
      << (*kernel)->fallback_reason();
  EXPECT_NE((*kernel)->fallback_reason().find("toolkit 'LLVM 1.0.0'"), std::string::npos)
      << (*kernel)->fallback_reason();

  // This build's LLVM, and a record that does not say (stored before records carried it).
  const int64_t unknown = AddRecord(kSpec, TiledTrace(kSpec, 8), host_, 3e-5);
  const int64_t same = AddRecord(kSpec, TiledTrace(kSpec, 4), host_, 2e-5, codegen::LlvmToolkitVersion());
  auto reopened = Compiler::Open({db_path_});
  auto chosen = (*reopened)->GetKernel(kSpec);
  ASSERT_TRUE(chosen.ok()) << chosen.status().message();
  EXPECT_EQ((*chosen)->record_id(), same);
  ExpectComputesReference(**chosen, kSpec);
  EXPECT_NE(unknown, same);
}

TEST_P(ReuseTest, RecordsOfTheCurrentTimingProtocolWinOverFasterOlderOnes) {
  // A log tuned before protocol 2 holds warm times of large kernels; its cold times are slower
  // without the kernel being so. Only when the current protocol has no record does an older
  // one serve.
  const int64_t old_fast = AddRecord(kSpec, TiledTrace(kSpec, 16), host_, 1e-6, "", 1);
  auto before = Compiler::Open({db_path_});
  ASSERT_TRUE(before.ok()) << before.status().message();
  auto only_old = (*before)->GetKernel(kSpec);
  ASSERT_TRUE(only_old.ok()) << only_old.status().message();
  EXPECT_EQ((*only_old)->record_id(), old_fast);

  const int64_t current = AddRecord(kSpec, TiledTrace(kSpec, 8), host_, 3e-5, "", v1::kMeasureProtocolVersion);
  auto after = Compiler::Open({db_path_});
  ASSERT_TRUE(after.ok()) << after.status().message();
  auto chosen = (*after)->GetKernel(kSpec);
  ASSERT_TRUE(chosen.ok()) << chosen.status().message();
  EXPECT_EQ((*chosen)->record_id(), current);
  ExpectComputesReference(**chosen, kSpec);
}

TEST_P(ReuseTest, ALogOfAnOlderCodeGenerationStillCompilesUntilTunedAgain) {
  // A log tuned before an upgrade: its record was timed as the program the older code
  // generation built, but its trace replays, so it compiles, with a warning that says so.
  const uint32_t older = kCodegenVersion - 1;
  const int64_t old_fast = AddRecord(kSpec, TiledTrace(kSpec, 16), host_, 1e-6, "", v1::kMeasureProtocolVersion, older);
  auto before = Compiler::Open({db_path_});
  ASSERT_TRUE(before.ok()) << before.status().message();
  auto only_old = (*before)->GetKernel(kSpec);
  ASSERT_TRUE(only_old.ok()) << only_old.status().message();
  EXPECT_TRUE((*only_old)->from_record()) << (*only_old)->fallback_reason();
  EXPECT_EQ((*only_old)->record_id(), old_fast);
  ASSERT_FALSE((*only_old)->warnings().empty());
  const std::string expected = "record " + std::to_string(old_fast) + " was timed under code generation " +
                               std::to_string(older) + ", this build's is " + std::to_string(kCodegenVersion);
  EXPECT_NE((*only_old)->warnings().back().find(expected), std::string::npos) << (*only_old)->warnings().back();
  ExpectComputesReference(**only_old, kSpec);

  // Tuned again: a record of this build's code generation ranks before every older one, and
  // before a faster one of an older protocol.
  AddRecord(kSpec, TiledTrace(kSpec, 4), host_, 2e-6, "", 1, kCodegenVersion);
  const int64_t current = AddRecord(kSpec, TiledTrace(kSpec, 8), host_, 3e-5, "", v1::kMeasureProtocolVersion,
                                    kCodegenVersion);
  auto after = Compiler::Open({db_path_});
  ASSERT_TRUE(after.ok()) << after.status().message();
  auto chosen = (*after)->GetKernel(kSpec);
  ASSERT_TRUE(chosen.ok()) << chosen.status().message();
  EXPECT_EQ((*chosen)->record_id(), current);
  for (const std::string& warning : (*chosen)->warnings()) {
    EXPECT_EQ(warning.find("code generation"), std::string::npos) << warning;
  }
}

TEST_P(ReuseTest, CompatibleTargetOnlyWhenAllowed) {
  auto host = *codegen::HostCpuTarget();
  target::Target bigger = host;
  bigger.num_cores = host.num_cores + 6;
  int64_t id = AddRecord(kSpec, TiledTrace(kSpec, 8), bigger.ToString(), 1e-5);
  auto strict = Compiler::Open({db_path_});
  auto fallback = (*strict)->GetKernel(kSpec);
  ASSERT_TRUE(fallback.ok());
  EXPECT_FALSE((*fallback)->from_record());
  EXPECT_NE((*fallback)->fallback_reason().find("other targets"), std::string::npos)
      << (*fallback)->fallback_reason();
  auto lenient = Compiler::Open({db_path_, "", /*allow_compatible_target=*/true});
  auto kernel = (*lenient)->GetKernel(kSpec);
  ASSERT_TRUE(kernel.ok());
  EXPECT_TRUE((*kernel)->from_record());
  EXPECT_EQ((*kernel)->record_id(), id);
  EXPECT_NE((*kernel)->warnings().back().find("compatible target"), std::string::npos);
  EXPECT_FALSE(reuse::IsCompatibleTarget(host.ToString(), "llvm -mcpu=skylake-avx512"));
}

TEST_P(ReuseTest, MissingDatabaseAndBadSpecAreErrors) {
  EXPECT_EQ(Compiler::Open({(dir_ / "none.db").string()}).status().code(), StatusCode::kNotFound);
  auto compiler = Compiler::Open({db_path_});
  EXPECT_EQ((*compiler)->GetKernel("matmul(M=1)").status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tuned

// Whole models on the real binary: `tuned tasks --model` and `tuned tune --model`, embedded,
// on models tests/models/make_models.py writes at build time.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <set>
#include <nlohmann/json.hpp>
#include <string>

#include "compiler/codegen/llvm/cpu_target.h"
#include "compiler/ir/op_library.h"
#include "compiler/schedule/schedule.h"
#include "compiler/schedule/trace.h"
#include "tests/cli/run_tuned.h"
#include "tuning_db/database.h"

namespace tuned {
namespace {

using ::testing::HasSubstr;
using Output = tuned::testing::CommandOutput;
using ModelCommandTest = tuned::testing::ScratchDirTest;

std::string TestModel(const std::string& name) { return std::string(TUNED_TEST_MODELS_DIR) + "/" + name; }

#define SKIP_WITHOUT_TEST_MODELS()                                                                 \
  if (std::string(TUNED_TEST_MODELS_DIR).empty()) {                                                \
    GTEST_SKIP() << "no python3 with the onnx package at configure time: test models not written"; \
  }

TEST_F(ModelCommandTest, TasksListsKernelsAndTheNodesOutsideThem) {
  SKIP_WITHOUT_TEST_MODELS();
  Output out = tuned::testing::RunTuned("tasks --model " + TestModel("tiny_cnn.onnx") + " --json");
  ASSERT_EQ(out.exit_code, 0) << out.err;
  nlohmann::json json = nlohmann::json::parse(out.out);
  ASSERT_EQ(json["tasks"].size(), 5u);
  EXPECT_EQ(json["tasks"][0]["ops"], "Conv+BatchNormalization+Relu");
  EXPECT_EQ(json["tasks"][2]["ops"], "Conv+BatchNormalization+Add+Relu");
  double share = 0;
  for (const auto& t : json["tasks"]) share += t["share"].get<double>();
  EXPECT_NEAR(share, 1.0, 1e-9);
  ASSERT_EQ(json["outside"].size(), 1u);
  EXPECT_EQ(json["outside"][0]["op"], "Flatten");

  Output table = tuned::testing::RunTuned("tasks --model " + TestModel("tiny_cnn.onnx"));
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_THAT(table.out, HasSubstr("5 kernels in 5 tasks"));
  EXPECT_THAT(table.out, HasSubstr("outside   Flatten"));
}

TEST_F(ModelCommandTest, BadModelsAndFlagsAreOneLineErrorsWithExitTwo) {
  SKIP_WITHOUT_TEST_MODELS();
  Output open_dim = tuned::testing::RunTuned("tasks --model " + TestModel("dynamic.onnx"));
  EXPECT_EQ(open_dim.exit_code, 2);
  EXPECT_THAT(open_dim.err, HasSubstr("input 'x' leaves dimension 0 ('N') open; give it with --input-shape x=..."));
  Output fixed = tuned::testing::RunTuned("tasks --model " + TestModel("dynamic.onnx") + " --input-shape x=32x8");
  EXPECT_EQ(fixed.exit_code, 0) << fixed.err;
  Output missing = tuned::testing::RunTuned("tasks --model " + dir_ + "/none.onnx");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_THAT(missing.err, HasSubstr("cannot open the file"));
  Output both = tuned::testing::RunTuned("tune --model " + TestModel("tiny_cnn.onnx") +
                                         " --workload 'matmul(M=8,N=8,K=8)' --db " + dir_ + "/t.db");
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_THAT(both.err, HasSubstr("--model and --workload name two things to tune"));
}

// Every task gets its first round, every record lands in the log, and a second run starts each
// task from its records (its best and the trials the log holds) instead of from nothing again.
TEST_F(ModelCommandTest, TuneSpendsOneBudgetOnEveryTaskAndResumesFromTheLog) {
  SKIP_WITHOUT_TEST_MODELS();
  const std::string db = dir_ + "/model.db";
  const std::string common = "tune --model " + TestModel("tiny_cnn.onnx") + " --db " + db +
                             " --min-repeat-ms 1 --json";
  Output first = tuned::testing::RunTuned(common + " --round-trials 4 --trials 20");
  ASSERT_EQ(first.exit_code, 0) << first.err;
  nlohmann::json run = nlohmann::json::parse(first.out);
  EXPECT_EQ(run["rounds"], 5);
  EXPECT_EQ(run["trials"], 20);
  double estimate = 0;
  for (const auto& t : run["tasks"]) {
    EXPECT_EQ(t["trials"], 4) << t["ops"];
    ASSERT_FALSE(t["best_seconds"].is_null()) << t["ops"] << "\n" << first.err;
    estimate += t["weight"].get<double>() * t["best_seconds"].get<double>();
    Output best = tuned::testing::RunTuned("db best '" + t["key"].get<std::string>() + "' --db " + db + " --json");
    EXPECT_EQ(best.exit_code, 0) << best.err;
  }
  EXPECT_NEAR(run["estimated_latency_seconds"].get<double>(), estimate, 1e-12);
  // The rounds' time, summed: each of the 20 trials was built and run within the rounds' wall time.
  const nlohmann::json& time = run["time"];
  EXPECT_EQ(time["trials"], 20);
  EXPECT_GT(time["build_seconds"].get<double>(), 0);
  EXPECT_GT(time["run_seconds"].get<double>(), 0);
  EXPECT_GT(time["search_seconds"].get<double>(), 0);
  EXPECT_LE(time["wall_seconds"].get<double>(), run["elapsed_seconds"].get<double>());
  EXPECT_GE(time["wall_seconds"].get<double>(), time["run_seconds"].get<double>());

  // The second run's one round (of 2 trials, smaller than the first run's 4) goes by the
  // gradient: every task starts from the 4 trials the log holds for it, not from a round's worth,
  // and still reports its best.
  Output second = tuned::testing::RunTuned(common + " --round-trials 2 --trials 2");
  ASSERT_EQ(second.exit_code, 0) << second.err;
  nlohmann::json resumed = nlohmann::json::parse(second.out);
  EXPECT_EQ(resumed["rounds"], 1);
  int tuned_again = 0;
  for (size_t i = 0; i < resumed["tasks"].size(); ++i) {
    const auto& t = resumed["tasks"][i];
    ASSERT_FALSE(t["best_seconds"].is_null()) << t["ops"];
    if (t["trials"] == 6) {
      ++tuned_again;
    } else {
      EXPECT_EQ(t["trials"], 4) << t["ops"];
    }
  }
  EXPECT_EQ(tuned_again, 1);

  // One library of every task's best, with a manifest mapping every node of the model; run
  // through it, the model gives the reference's outputs.
  const std::string library = dir_ + "/tiny.so";
  Output compiled = tuned::testing::RunTuned("compile --model " + TestModel("tiny_cnn.onnx") + " --db " + db +
                                             " -o " + library + " --json");
  ASSERT_EQ(compiled.exit_code, 0) << compiled.err;
  EXPECT_EQ(nlohmann::json::parse(compiled.out)["from_record"], 5);
  std::ifstream manifest_file(dir_ + "/tiny.json");
  nlohmann::json manifest = nlohmann::json::parse(manifest_file);
  ASSERT_EQ(manifest["steps"].size(), 6u);  // 5 kernels and the Flatten
  std::multiset<std::string> nodes;
  for (const auto& step : manifest["steps"]) {
    if (step.contains("outside")) {
      nodes.insert(step["outside"].get<std::string>());
      EXPECT_EQ(step["op"], "Flatten");
    } else {
      for (const auto& n : step["nodes"]) nodes.insert(n.get<std::string>());
      EXPECT_FALSE(step["inputs"].empty());
    }
  }
  EXPECT_EQ(nodes.size(), 11u);  // every node of the model once (the Constant nodes are none)
  EXPECT_EQ(std::set<std::string>(nodes.begin(), nodes.end()).size(), nodes.size());
  EXPECT_EQ(manifest["derived_constants"].size(), 4u);  // two folded BatchNormalizations

  Output runs = tuned::testing::RunTuned("run-model --model " + TestModel("tiny_cnn.onnx") + " --library " + library +
                                        " --check --repeat 3 --json");
  ASSERT_EQ(runs.exit_code, 0) << runs.err;
  nlohmann::json ran = nlohmann::json::parse(runs.out);
  EXPECT_LE(ran["max_relative_error"].get<double>(), ran["tolerance"].get<double>());
  EXPECT_GT(ran["kernel_median_seconds"].get<double>(), 0);
  EXPECT_GE(ran["median_seconds"].get<double>(), ran["kernel_median_seconds"].get<double>());
  EXPECT_TRUE(ran.contains("estimated_seconds"));
  EXPECT_EQ(ran["cold"], false);
  EXPECT_EQ(ran["samples"], 3);
  EXPECT_EQ(ran["runs"], 3);

  // Samples of several runs each: a sample lasts at least --min-sample-seconds, so it holds
  // more than one run of this small model, and the median stays a time per run.
  Output sampled = tuned::testing::RunTuned("run-model --model " + TestModel("tiny_cnn.onnx") + " --library " +
                                            library + " --repeat 3 --min-sample-seconds 0.05 --json");
  ASSERT_EQ(sampled.exit_code, 0) << sampled.err;
  nlohmann::json per_run = nlohmann::json::parse(sampled.out);
  EXPECT_EQ(per_run["samples"], 3);
  const double sampled_runs = per_run["runs"].get<double>();
  EXPECT_GT(sampled_runs, 3);
  EXPECT_GE(sampled_runs * per_run["median_seconds"].get<double>(), 0.05);
  EXPECT_LT(per_run["median_seconds"].get<double>(), 0.05);
  Output negative = tuned::testing::RunTuned("run-model --model " + TestModel("tiny_cnn.onnx") + " --library " +
                                             library + " --min-sample-seconds -1");
  EXPECT_NE(negative.exit_code, 0);
  EXPECT_NE(negative.err.find("--min-sample-seconds must not be negative"), std::string::npos) << negative.err;

  // Cold runs: the caches flushed before each, and the outputs unchanged by it.
  Output cold = tuned::testing::RunTuned("run-model --model " + TestModel("tiny_cnn.onnx") + " --library " + library +
                                         " --check --repeat 2 --flush-cache --min-sample-seconds 0.05 --json");
  ASSERT_EQ(cold.exit_code, 0) << cold.err;
  nlohmann::json cold_ran = nlohmann::json::parse(cold.out);
  EXPECT_EQ(cold_ran["cold"], true);
  EXPECT_EQ(cold_ran["runs"], 2);  // a cold sample is one run: each run follows its flush
  EXPECT_LE(cold_ran["max_relative_error"].get<double>(), cold_ran["tolerance"].get<double>());
}

TEST_F(ModelCommandTest, AWeightLaidOutAheadIsPackedByTheLibraryOnceAndTheModelStillMatches) {
  SKIP_WITHOUT_TEST_MODELS();
  // The first convolution's record lays its weight out at the root: the library gets a prepack
  // entry for it, the manifest names it, and run-model packs the weight before the runs.
  Output tasks = tuned::testing::RunTuned("tasks --model " + TestModel("tiny_cnn.onnx") + " --json");
  ASSERT_EQ(tasks.exit_code, 0) << tasks.err;
  std::string key;
  const nlohmann::json listed = nlohmann::json::parse(tasks.out);
  for (const auto& t : listed["tasks"]) {
    if (t["key"].get<std::string>().find("input weight: const float32") != std::string::npos) {
      key = t["key"].get<std::string>();
      break;
    }
  }
  ASSERT_FALSE(key.empty()) << "no task reads a constant weight:\n" << tasks.out;
  auto workload = std::make_shared<const ir::Workload>(*ir::ParseWorkloadSpec(key));
  schedule::Schedule sch(workload, 0);
  auto conv = *sch.GetBlock("conv");
  std::vector<ir::Buffer> reads = sch.state().ReadBuffers(sch.StageOf(conv));
  int weight = 0;
  while (reads[size_t(weight)]->name != "weight") ++weight;
  ASSERT_TRUE(sch.CacheRead(conv, weight, "global").ok());
  v1::TuningRecord record;
  record.mutable_workload()->set_key(workload->key());
  record.mutable_workload()->set_key_sha256(workload->key_sha256());
  record.mutable_workload()->set_op(workload->op());
  record.mutable_workload()->set_flops(workload->flops());
  record.mutable_target()->set_target(codegen::HostCpuTarget()->ToString());
  schedule::TraceToProto(sch.trace(), record.mutable_trace());
  record.mutable_result()->set_status(v1::MEASURE_STATUS_OK);
  record.mutable_result()->add_repeat_seconds(1e-6);
  record.mutable_result()->set_median_seconds(1e-6);
  record.mutable_result()->set_worker_id("test");
  const std::string db = dir_ + "/packed.db";
  {
    auto log = db::OpenDatabase(db);
    ASSERT_TRUE(log.ok()) << log.status().message();
    ASSERT_TRUE((*log)->InsertRecords({&record, 1}).ok());
  }
  const std::string library = dir_ + "/packed.so";
  Output compiled = tuned::testing::RunTuned("compile --model " + TestModel("tiny_cnn.onnx") + " --db " + db +
                                             " -o " + library);
  ASSERT_EQ(compiled.exit_code, 0) << compiled.err;
  std::ifstream manifest_file(dir_ + "/packed.json");
  nlohmann::json manifest = nlohmann::json::parse(manifest_file);
  int prepacked = 0;
  for (const auto& f : manifest["functions"]) {
    if (!f.contains("prepack")) continue;
    ++prepacked;
    EXPECT_EQ(f["key"], key);
    EXPECT_EQ(f["packed_bytes"], nlohmann::json::array({workload->inputs()[1]->num_elements() * 4}));
  }
  EXPECT_EQ(prepacked, 1) << manifest.dump(2);
  Output runs = tuned::testing::RunTuned("run-model --model " + TestModel("tiny_cnn.onnx") + " --library " + library +
                                        " --check --repeat 3 --json");
  ASSERT_EQ(runs.exit_code, 0) << runs.err;
  nlohmann::json ran = nlohmann::json::parse(runs.out);
  EXPECT_LE(ran["max_relative_error"].get<double>(), ran["tolerance"].get<double>());
}

}  // namespace
}  // namespace tuned

// The shared cost model of a target is saved after each batch and picked up by the next task
// (transfer), from a real SQLite tuning log.

#include <filesystem>
#include <random>

#include <gtest/gtest.h>

#include "compiler/ir/op_library.h"
#include "costmodel/model/cost_model.h"
#include "server/search/default_schedule_first.h"
#include "server/search/model_registry.h"
#include "tuning_db/database.h"

namespace tuned::search {
namespace {

class ModelRegistryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = std::filesystem::temp_directory_path() /
            ("tuned_models_" + std::to_string(::getpid()) + "_" + std::to_string(std::random_device{}()) + ".db");
    db_ = std::move(db::OpenSqliteDatabase(path_.string())).value();
    ctx_.workload = std::make_shared<const ir::Workload>(*ir::ParseWorkloadSpec("matmul(M=32,N=32,K=16)"));
    ctx_.target = "llvm -mcpu=znver3 -num-cores=2";
    ctx_.num_cores = 2;
    ctx_.seed = 3;
  }
  void TearDown() override {
    db_.reset();
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path_.string() + suffix);
  }

  // Runs `rounds` batches with synthetic results (faster for larger inner tiles).
  void RunBatches(SearchStrategy& search, int rounds) {
    for (int r = 0; r < rounds; ++r) {
      auto batch = search.NextBatch(16);
      ASSERT_TRUE(batch.ok()) << batch.status().message();
      std::vector<MeasuredCandidate> results;
      for (const Candidate& c : *batch) {
        double score = 1;
        for (const auto& d : c.trace.decisions()) score += double(d.values(d.values_size() - 1));
        v1::MeasureResult result;
        result.set_status(v1::MEASURE_STATUS_OK);
        result.set_median_seconds(1e-3 / score);
        results.push_back({c.trace, result});
      }
      ASSERT_TRUE(search.Update(results).ok());
    }
  }

  std::filesystem::path path_;
  std::unique_ptr<db::Database> db_;
  SearchContext ctx_;
};

TEST_F(ModelRegistryTest, ModelIsSavedAfterBatchesAndTransfersToTheNextTask) {
  {
    ModelRegistry models({db_.get(), db_.get()});
    auto search = MakeTaskSearch(ctx_, v1::SearchOptions(), models);
    ASSERT_TRUE(search.ok()) << search.status().message();
    RunBatches(**search, 2);
    EXPECT_EQ((*models.ForTarget(ctx_))->num_samples(), 32);
  }
  ModelRegistry restarted({db_.get(), db_.get()});
  auto model = restarted.ForTarget(ctx_);
  ASSERT_TRUE(model.ok());
  EXPECT_EQ((*model)->num_samples(), 32) << "the new task starts from the saved snapshot";
  SearchContext other_target = ctx_;
  other_target.target = "llvm -mcpu=skylake -num-cores=4";
  other_target.num_cores = 4;
  auto other = restarted.ForTarget(other_target);
  ASSERT_TRUE(other.ok());
  EXPECT_EQ((*other)->num_samples(), 0) << "models are per target";
}

TEST_F(ModelRegistryTest, EveryTaskMeasuresTheDefaultScheduleFirst) {
  ModelRegistry models({db_.get(), db_.get()});
  for (const char* strategy : {"evolutionary", "random"}) {
    v1::SearchOptions options;
    options.set_strategy(strategy);
    auto search = MakeTaskSearch(ctx_, options, models);
    ASSERT_TRUE(search.ok());
    auto batch = (*search)->NextBatch(4);
    ASSERT_TRUE(batch.ok());
    ASSERT_EQ(batch->size(), 4u) << strategy;
    // The default schedule is the program `tuned compile` falls back to (compiler/lower/pipeline.h).
    EXPECT_EQ((*batch)[0].trace_hash, DefaultScheduleCandidate(ctx_.workload)->trace_hash)
        << strategy << ": the default schedule comes first";
    for (size_t i = 1; i < batch->size(); ++i) EXPECT_GT((*batch)[i].trace.instructions_size(), 0);
  }
}

TEST_F(ModelRegistryTest, StrategyOptionChoosesTheSearch) {
  // The evolutionary search (the default) teaches the target's shared model; the random search
  // learns nothing.
  for (const char* strategy : {"random", "evolutionary", ""}) {
    ModelRegistry models({});
    v1::SearchOptions options;
    options.set_strategy(strategy);
    auto search = MakeTaskSearch(ctx_, options, models);
    ASSERT_TRUE(search.ok()) << strategy;
    RunBatches(**search, 1);
    EXPECT_EQ((*models.ForTarget(ctx_))->num_samples(), std::string(strategy) == "random" ? 0 : 16)
        << "strategy '" << strategy << "'";
  }
  ModelRegistry models({});
  v1::SearchOptions bad;
  bad.set_strategy("annealing");
  auto refused = MakeTaskSearch(ctx_, bad, models);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("unknown search strategy 'annealing'"), std::string::npos);
}

}  // namespace
}  // namespace tuned::search

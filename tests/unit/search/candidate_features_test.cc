// The target's shared model is pre-trained on the features the live search queries it with:
// the same options, cores from the target (a model trained on one-core features and queried
// with four-core ones ranks candidates on a distribution it never saw).

#include <algorithm>
#include <filesystem>
#include <random>

#include <gtest/gtest.h>

#include "compiler/ir/op_library.h"
#include "costmodel/model/cost_model.h"
#include "costmodel/model/pretrain.h"
#include "server/search/candidate_features.h"
#include "server/search/evolutionary_search.h"
#include "server/search/model_registry.h"
#include "server/search/random_search.h"
#include "target/target.h"
#include "tuning_db/database.h"

namespace tuned::search {
namespace {

class CandidateFeaturesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = std::filesystem::temp_directory_path() /
            ("tuned_features_" + std::to_string(::getpid()) + "_" + std::to_string(std::random_device{}()) + ".db");
    db_ = std::move(db::OpenSqliteDatabase(path_.string())).value();
    StatusOr<target::Target> target = target::ParseTarget("llvm -mcpu=znver3 -num-cores=4");
    ASSERT_TRUE(target.ok());
    ctx_.workload = std::make_shared<const ir::Workload>(*ir::ParseWorkloadSpec("matmul(M=32,N=32,K=16)"));
    ctx_.target = target->ToString();
    ctx_.num_cores = target->num_cores;
    ctx_.vector_lanes = target->Fp32VectorLanes();
    ctx_.vector_registers = target->VectorRegisters();
    ctx_.seed = 7;
  }
  void TearDown() override {
    db_.reset();
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path_.string() + suffix);
  }

  // Stores `n` random candidates as measured records of the target (faster for larger tiles).
  void StoreMeasuredRecords(int n) {
    auto random = MakeRandomSearch(ctx_);
    ASSERT_TRUE(random.ok());
    auto batch = (*random)->NextBatch(n);
    ASSERT_TRUE(batch.ok());
    ASSERT_EQ(int(batch->size()), n);
    int64_t seq = 0;
    for (const Candidate& c : *batch) {
      double score = 1;
      for (const auto& d : c.trace.decisions()) score += double(d.values(d.values_size() - 1));
      v1::TuningRecord record;
      record.mutable_workload()->set_key(ctx_.workload->key());
      record.mutable_workload()->set_op(ctx_.workload->op());
      record.mutable_workload()->set_flops(ctx_.workload->flops());
      record.mutable_target()->set_target(ctx_.target);
      record.mutable_target()->set_kind(v1::TARGET_KIND_LLVM_CPU);
      *record.mutable_trace() = c.trace;
      record.mutable_result()->set_status(v1::MEASURE_STATUS_OK);
      record.mutable_result()->add_repeat_seconds(1e-3 / score);
      record.mutable_result()->set_median_seconds(1e-3 / score);
      record.mutable_result()->set_worker_id("worker-1");
      record.set_created_unix_ms(1700000000000 + ++seq);
      ASSERT_TRUE(db_->InsertRecord(record).ok());
      stored_traces_.push_back(c.trace);
    }
  }

  std::filesystem::path path_;
  std::unique_ptr<db::Database> db_;
  SearchContext ctx_;
  std::vector<v1::Trace> stored_traces_;
};

TEST_F(CandidateFeaturesTest, OptionsTakeTheCoresOfTheTarget) {
  EXPECT_EQ(CandidateFeatureOptions(ctx_).num_cores, 4);
  EXPECT_EQ(ModelPretrainOptions(ctx_).features.num_cores, 4);
  SearchContext one_core = ctx_;
  one_core.num_cores = 1;
  EXPECT_EQ(ModelPretrainOptions(one_core).features.num_cores, 1);
}

// The real XGBoost model, with every feature row it is given written down.
class WatchedModel : public costmodel::CostModel {
 public:
  struct Seen {
    std::vector<std::vector<float>> trained;  // rows it was trained on
    std::vector<std::vector<float>> scored;   // rows given to Predict
  };
  WatchedModel(std::unique_ptr<costmodel::CostModel> model, Seen& seen)
      : model_(std::move(model)), seen_(seen) {}
  StatusOr<std::vector<double>> Predict(const std::vector<std::vector<float>>& features) override {
    seen_.scored.insert(seen_.scored.end(), features.begin(), features.end());
    return model_->Predict(features);
  }
  Status UpdateLabelled(const std::vector<std::vector<float>>& features, const std::vector<double>& throughputs,
                        const std::vector<std::string>& group_keys) override {
    seen_.trained.insert(seen_.trained.end(), features.begin(), features.end());
    return model_->UpdateLabelled(features, throughputs, group_keys);
  }
  int64_t num_samples() const override { return model_->num_samples(); }
  StatusOr<std::string> Serialize() const override { return model_->Serialize(); }
  Status Deserialize(const std::string& blob) override { return model_->Deserialize(blob); }
  std::string format() const override { return model_->format(); }

 private:
  std::unique_ptr<costmodel::CostModel> model_;
  Seen& seen_;
};

TEST_F(CandidateFeaturesTest, PretrainTimeFeaturesEqualSearchTimeFeatures) {
  StoreMeasuredRecords(32);
  WatchedModel::Seen seen;
  ModelRegistry models({db_.get(), db_.get()}, [&seen]() -> StatusOr<std::unique_ptr<costmodel::CostModel>> {
    TUNED_ASSIGN_OR_RETURN(auto xgb, costmodel::MakeXgbCostModel());
    return std::unique_ptr<costmodel::CostModel>(new WatchedModel(std::move(xgb), seen));
  });
  auto model = models.ForTarget(ctx_);
  ASSERT_TRUE(model.ok()) << model.status().message();
  ASSERT_EQ(seen.trained.size(), 32u) << "pre-trained from the stored records";
  std::vector<std::vector<float>> pretrain_time = seen.trained;

  // The live search on the same target starts from the best stored records: the same
  // candidates, featurized at search time and scored by the model.
  SearchContext live = ctx_;
  live.database = db_.get();
  auto search = MakeEvolutionarySearch(live, *model);
  ASSERT_TRUE(search.ok());
  ASSERT_TRUE((*search)->NextBatch(8).ok());
  int found = 0;
  for (const std::vector<float>& row : pretrain_time) {
    if (std::find(seen.scored.begin(), seen.scored.end(), row) != seen.scored.end()) ++found;
  }
  EvolutionaryOptions defaults;
  EXPECT_GE(found, defaults.seeds_from_measured)
      << "the seeded candidates' search-time features match their pre-train-time features";

  // And those features are the target's: four cores.
  const auto& names = costmodel::FeatureNames();
  size_t cores = std::find(names.begin(), names.end(), "g.num_cores") - names.begin();
  ASSERT_LT(cores, names.size());
  costmodel::FeatureOptions four_cores;
  four_cores.num_cores = 4;
  auto expected = costmodel::FeaturizeTrace(ctx_.workload, stored_traces_.front(), four_cores);
  ASSERT_TRUE(expected.ok());
  for (const std::vector<float>& row : pretrain_time) EXPECT_EQ(row[cores], (*expected)[cores]);
}

// On a GPU target the search scores candidates with their kernels' block (taken from the
// candidate check's lowering), and pre-training a stored trace gives the same row.
TEST_F(CandidateFeaturesTest, GpuCandidatesCarryTheGpuBlockAtSearchAndPretrainTime) {
  SearchContext gpu = ctx_;
  StatusOr<target::Target> target = target::ParseTarget("cuda -arch=sm_90");
  ASSERT_TRUE(target.ok());
  gpu.target = target->ToString();
  gpu.num_cores = 1;
  const costmodel::FeatureOptions options = CandidateFeatureOptions(gpu);
  ASSERT_TRUE(options.gpu.has_value());
  EXPECT_EQ(options.gpu->warp_size, 32);
  EXPECT_FALSE(CandidateFeatureOptions(ctx_).gpu.has_value()) << "a CPU target has no GPU block";

  WatchedModel::Seen seen;
  auto xgb = costmodel::MakeXgbCostModel();
  ASSERT_TRUE(xgb.ok());
  WatchedModel model(std::move(xgb).value(), seen);
  auto search = MakeEvolutionarySearch(gpu, &model);
  ASSERT_TRUE(search.ok());
  auto batch = (*search)->NextBatch(4);
  ASSERT_TRUE(batch.ok());
  ASSERT_FALSE(batch->empty());
  const auto& names = costmodel::FeatureNames();
  const size_t kernels = std::find(names.begin(), names.end(), "gpu.kernels") - names.begin();
  ASSERT_LT(kernels, names.size());
  for (const std::vector<float>& row : seen.scored) EXPECT_GE(row[kernels], 1.f);
  for (const Candidate& c : *batch) {
    auto row = costmodel::FeaturizeTrace(gpu.workload, c.trace, ModelPretrainOptions(gpu).features);
    ASSERT_TRUE(row.ok()) << row.status().message();
    EXPECT_NE(std::find(seen.scored.begin(), seen.scored.end(), *row), seen.scored.end())
        << "pre-train-time features of a proposed candidate are its search-time features";
  }
}

}  // namespace
}  // namespace tuned::search

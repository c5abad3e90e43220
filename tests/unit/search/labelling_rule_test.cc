// The cost model's one labelling rule: pre-training from stored records and a live search's
// Update teach a model the same samples with the same labels, failures included.

#include <filesystem>
#include <random>

#include <gtest/gtest.h>
#include <unistd.h>

#include "compiler/ir/op_library.h"
#include "costmodel/model/cost_model.h"
#include "costmodel/model/pretrain.h"
#include "server/search/evolutionary_search.h"
#include "server/search/random_search.h"
#include "tuning_db/database.h"

namespace tuned::search {
namespace {

constexpr v1::MeasureStatus kStatuses[] = {
    v1::MEASURE_STATUS_OK,           v1::MEASURE_STATUS_RUNTIME_ERROR, v1::MEASURE_STATUS_OK,
    v1::MEASURE_STATUS_COMPILE_ERROR, v1::MEASURE_STATUS_TIMEOUT,      v1::MEASURE_STATUS_WORKER_LOST,
    v1::MEASURE_STATUS_WRONG_RESULT};

TEST(LabellingRule, PretrainingAndALiveSearchTrainTheSameModel) {
  std::filesystem::path path = std::filesystem::temp_directory_path() /
                               ("tuned_labels_" + std::to_string(::getpid()) + "_" +
                                std::to_string(std::random_device{}()) + ".db");
  auto database = db::OpenSqliteDatabase(path.string());
  ASSERT_TRUE(database.ok()) << database.status().message();

  SearchContext ctx;
  ctx.workload = std::make_shared<const ir::Workload>(*ir::ParseWorkloadSpec("matmul(M=32,N=32,K=16)"));
  ctx.target = "llvm -mcpu=znver3 -num-cores=2";
  ctx.num_cores = 2;
  ctx.seed = 5;
  auto sampler = MakeRandomSearch(ctx);
  ASSERT_TRUE(sampler.ok());
  auto batch = (*sampler)->NextBatch(35);
  ASSERT_TRUE(batch.ok());
  ASSERT_EQ(batch->size(), 35u);

  // The same results twice: as stored records, and as a measured batch for the search.
  std::vector<MeasuredCandidate> results;
  std::vector<v1::TuningRecord> records;
  int64_t labelled = 0;
  for (size_t i = 0; i < batch->size(); ++i) {
    v1::MeasureResult result;
    result.set_status(kStatuses[i % std::size(kStatuses)]);
    result.set_worker_id("w");
    if (result.status() == v1::MEASURE_STATUS_OK) {
      result.set_median_seconds(1e-4 * double(1 + i % 5));
      result.add_repeat_seconds(result.median_seconds());
    }
    bool has_label = result.status() != v1::MEASURE_STATUS_COMPILE_ERROR &&
                     result.status() != v1::MEASURE_STATUS_WORKER_LOST;
    labelled += has_label ? 1 : 0;
    results.push_back({(*batch)[i].trace, result});
    v1::TuningRecord record;
    record.mutable_workload()->set_key(ctx.workload->key());
    record.mutable_workload()->set_flops(ctx.workload->flops());
    record.mutable_target()->set_target(ctx.target);
    *record.mutable_trace() = (*batch)[i].trace;
    *record.mutable_result() = result;
    record.set_created_unix_ms(1700000000000 + int64_t(i));
    records.push_back(record);
  }
  ASSERT_TRUE((*database)->InsertRecords(records).ok());

  auto pretrained = costmodel::MakeXgbCostModel();
  ASSERT_TRUE(pretrained.ok());
  costmodel::PretrainOptions options;
  options.features.num_cores = ctx.num_cores;
  auto stats = costmodel::PretrainFromDatabase(**database, ctx.target, **pretrained, options);
  ASSERT_TRUE(stats.ok()) << stats.status().message();

  auto live = costmodel::MakeXgbCostModel();
  ASSERT_TRUE(live.ok());
  auto search = MakeEvolutionarySearch(ctx, live->get());
  ASSERT_TRUE(search.ok());
  ASSERT_TRUE((*search)->Update(results).ok());

  EXPECT_EQ((*pretrained)->num_samples(), labelled) << "compile errors and lost workers are skipped";
  EXPECT_EQ((*live)->num_samples(), labelled) << "compile errors and lost workers are skipped";
  // The blob holds every training sample with its label and group, and the trained booster.
  auto a = (*pretrained)->Serialize();
  auto b = (*live)->Serialize();
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_TRUE(*a == *b) << "pre-training and the live search labelled the same results differently";

  database->reset();
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path.string() + suffix);
}

TEST(LabellingRule, StatusesMapToThroughputZeroOrNothing) {
  v1::MeasureResult result;
  result.set_status(v1::MEASURE_STATUS_OK);
  result.set_median_seconds(0.5);
  EXPECT_DOUBLE_EQ(*costmodel::TrainingThroughput(result, 100), 200.0);
  EXPECT_FALSE(costmodel::TrainingThroughput(result, 0)) << "no flop count, no label";
  result.set_median_seconds(0);
  EXPECT_FALSE(costmodel::TrainingThroughput(result, 100)) << "OK without a time";
  for (v1::MeasureStatus unusable : {v1::MEASURE_STATUS_RUNTIME_ERROR, v1::MEASURE_STATUS_WRONG_RESULT,
                                     v1::MEASURE_STATUS_TIMEOUT, v1::MEASURE_STATUS_BUILD_TIMEOUT}) {
    result.set_status(unusable);
    EXPECT_EQ(costmodel::TrainingThroughput(result, 100), 0.0) << v1::MeasureStatus_Name(unusable);
  }
  for (v1::MeasureStatus silent : {v1::MEASURE_STATUS_COMPILE_ERROR, v1::MEASURE_STATUS_WORKER_LOST,
                                   v1::MEASURE_STATUS_UNSPECIFIED}) {
    result.set_status(silent);
    EXPECT_FALSE(costmodel::TrainingThroughput(result, 100)) << v1::MeasureStatus_Name(silent);
  }
}

}  // namespace
}  // namespace tuned::search

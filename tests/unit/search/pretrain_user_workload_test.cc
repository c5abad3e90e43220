// Pre-training rebuilds user-defined workloads from their definition keys, as it does library
// ops: records of a `tdl: ...` workload are samples, not skipped workloads.

#include <filesystem>
#include <random>

#include <gtest/gtest.h>
#include <unistd.h>

#include "compiler/ir/tdl/definition.h"
#include "costmodel/model/cost_model.h"
#include "costmodel/model/pretrain.h"
#include "server/search/random_search.h"
#include "tuning_db/database.h"

namespace tuned::search {
namespace {

TEST(PretrainUserWorkload, RecordsOfADefinitionKeyBecomeSamples) {
  std::filesystem::path path = std::filesystem::temp_directory_path() /
                               ("tuned_pretrain_tdl_" + std::to_string(::getpid()) + "_" +
                                std::to_string(std::random_device{}()) + ".db");
  auto database = db::OpenSqliteDatabase(path.string());
  ASSERT_TRUE(database.ok()) << database.status().message();

  StatusOr<ir::Workload> workload = ir::ParseDefinition(R"(
param M = 16, N = 32
input X: float32[M, N]
row_sum[i: M] = sum[j: N](X[i, j])
out[i: M, j: N] = X[i, j] - row_sum[i] / N)");
  ASSERT_TRUE(workload.ok()) << workload.status().message();
  SearchContext ctx;
  ctx.workload = std::make_shared<const ir::Workload>(*workload);
  ctx.target = "llvm -mcpu=znver3 -num-cores=2";
  ctx.num_cores = 2;
  ctx.seed = 3;
  auto sampler = MakeRandomSearch(ctx);
  ASSERT_TRUE(sampler.ok());
  auto batch = (*sampler)->NextBatch(6);
  ASSERT_TRUE(batch.ok());
  ASSERT_FALSE(batch->empty());

  std::vector<v1::TuningRecord> records;
  for (size_t i = 0; i < batch->size(); ++i) {
    v1::TuningRecord record;
    record.mutable_workload()->set_key(ctx.workload->key());
    record.mutable_workload()->set_flops(ctx.workload->flops());
    record.mutable_target()->set_target(ctx.target);
    *record.mutable_trace() = (*batch)[i].trace;
    record.mutable_result()->set_status(v1::MEASURE_STATUS_OK);
    record.mutable_result()->set_worker_id("w");
    record.mutable_result()->set_median_seconds(1e-5 * double(1 + i));
    record.mutable_result()->add_repeat_seconds(1e-5 * double(1 + i));
    record.set_created_unix_ms(1700000000000 + int64_t(i));
    records.push_back(record);
  }
  ASSERT_TRUE((*database)->InsertRecords(records).ok());

  auto model = costmodel::MakeXgbCostModel();
  ASSERT_TRUE(model.ok());
  costmodel::PretrainOptions options;
  options.features.num_cores = ctx.num_cores;
  auto stats = costmodel::PretrainFromDatabase(**database, ctx.target, **model, options);
  ASSERT_TRUE(stats.ok()) << stats.status().message();
  EXPECT_EQ(stats->skipped_workload, 0);
  EXPECT_EQ(stats->skipped_replay, 0);
  EXPECT_EQ(stats->samples, int64_t(records.size()));
  EXPECT_EQ((*model)->num_samples(), int64_t(records.size()));

  database->reset();
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path.string() + suffix);
}

}  // namespace
}  // namespace tuned::search

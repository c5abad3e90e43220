// Snapshots and pre-training through a real SQLite tuning database file.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <random>

#include "compiler/ir/op_library.h"
#include "compiler/lower/lower.h"
#include "compiler/schedule/trace.h"
#include "costmodel/features/features.h"
#include "costmodel/model/cost_model.h"
#include "costmodel/model/pretrain.h"
#include "costmodel/model/snapshot.h"
#include "tests/support/random_schedule.h"
#include "tuned/v1/trace.pb.h"
#include "tuning_db/database.h"

namespace tuned::costmodel {
namespace {

using ::testing::HasSubstr;

constexpr char kTarget[] = "llvm -mcpu=znver3 -num-cores=2";

class TempDb {
 public:
  TempDb() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "tuned_costmodel_test_XXXXXX").string();
    char* made = mkdtemp(pattern.data());
    if (made == nullptr) std::abort();
    dir_ = made;
    auto db = db::OpenSqliteDatabase((dir_ / "tuned.db").string());
    EXPECT_TRUE(db.ok()) << db.status().ToString();
    db_ = std::move(db).value();
  }
  ~TempDb() {
    db_.reset();
    std::error_code error;
    std::filesystem::remove_all(dir_, error);
  }
  db::Database& db() { return *db_; }
  std::string path() const { return (dir_ / "tuned.db").string(); }

 private:
  std::filesystem::path dir_;
  std::unique_ptr<db::Database> db_;
};

std::shared_ptr<const ir::Workload> Workload(const std::string& spec) {
  StatusOr<ir::Workload> w = ir::ParseWorkloadSpec(spec);
  EXPECT_TRUE(w.ok()) << spec << ": " << w.status().ToString();
  return std::make_shared<const ir::Workload>(std::move(w).value());
}

v1::TuningRecord MakeRecord(const ir::Workload& workload, const v1::Trace& trace, int64_t seq,
                            v1::MeasureStatus status, double median_seconds) {
  v1::TuningRecord record;
  record.mutable_workload()->set_key(workload.key());
  record.mutable_workload()->set_op(workload.op());
  record.mutable_workload()->set_flops(workload.flops());
  record.mutable_target()->set_target(kTarget);
  record.mutable_target()->set_kind(v1::TARGET_KIND_LLVM_CPU);
  *record.mutable_trace() = trace;
  v1::MeasureResult* result = record.mutable_result();
  result->set_status(status);
  if (status == v1::MEASURE_STATUS_OK) {
    result->add_repeat_seconds(median_seconds);
    result->set_median_seconds(median_seconds);
  } else {
    result->set_error("failed on purpose");
  }
  result->set_worker_id("worker-1");
  record.set_created_unix_ms(1700000000000 + seq);
  return record;
}

std::vector<std::vector<float>> SomeFeatures(int n) {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<float> uniform(0.f, 4.f);
  std::vector<std::vector<float>> out;
  for (int i = 0; i < n; ++i) {
    std::vector<float> f(static_cast<size_t>(FeatureCount()));
    for (float& v : f) v = uniform(rng);
    out.push_back(std::move(f));
  }
  return out;
}

std::unique_ptr<CostModel> TrainedModel() {
  auto model = MakeXgbCostModel();
  EXPECT_TRUE(model.ok());
  std::vector<std::vector<float>> features = SomeFeatures(64);
  std::vector<double> throughputs;
  for (const auto& f : features) throughputs.push_back(1e9 * (1 + f[0] + f[1]));
  EXPECT_TRUE((*model)->UpdateLabelled(features, throughputs, std::vector<std::string>(64, "w")).ok());
  return std::move(model).value();
}

TEST(Snapshot, SaveAndLoadGiveIdenticalPredictions) {
  TempDb temp;
  auto model = TrainedModel();
  auto saved = SaveSnapshot(temp.db(), kTarget, *model);
  ASSERT_TRUE(saved.ok()) << saved.status().ToString();
  EXPECT_TRUE(*saved);

  // A new process on the same file: reopen, load into a fresh model.
  auto reopened = db::OpenSqliteDatabase(temp.path());
  ASSERT_TRUE(reopened.ok());
  auto stored = (*reopened)->LatestCostModelSnapshot(kTarget);
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(stored->format, "tuned-xgb-v1");
  EXPECT_EQ(stored->feature_version, kFeatureVersion);
  EXPECT_EQ(stored->num_records, 64);

  auto loaded = MakeXgbCostModel();
  ASSERT_TRUE(loaded.ok());
  ASSERT_TRUE(LoadLatestSnapshot(**reopened, kTarget, **loaded).ok());
  std::vector<std::vector<float>> probe = SomeFeatures(10);
  EXPECT_EQ(*(*loaded)->Predict(probe), *model->Predict(probe));
  EXPECT_EQ((*loaded)->num_samples(), 64);
}

TEST(Snapshot, MissingTargetIsNotFound) {
  TempDb temp;
  auto model = MakeXgbCostModel();
  ASSERT_TRUE(model.ok());
  Status status = LoadLatestSnapshot(temp.db(), "cuda -arch=sm_90", **model);
  EXPECT_EQ(status.code(), StatusCode::kNotFound);
  EXPECT_THAT(status.message(), HasSubstr("cuda -arch=sm_90"));
}

TEST(Snapshot, OtherFormatOrFeatureVersionIsRefused) {
  TempDb temp;
  auto random = MakeRandomCostModel(1);
  ASSERT_TRUE(SaveSnapshot(temp.db(), kTarget, *random).ok());
  auto model = TrainedModel();
  std::vector<std::vector<float>> probe = SomeFeatures(4);
  std::vector<double> before = *model->Predict(probe);
  Status status = LoadLatestSnapshot(temp.db(), kTarget, *model);
  EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(), HasSubstr("random-v1"));
  EXPECT_EQ(*model->Predict(probe), before);

  db::CostModelSnapshot old;
  old.target = "llvm -mcpu=generic";
  old.format = "tuned-xgb-v1";
  old.feature_version = kFeatureVersion + 7;
  old.model = "whatever";
  ASSERT_TRUE(temp.db().SaveCostModelSnapshot(old).ok());
  status = LoadLatestSnapshot(temp.db(), "llvm -mcpu=generic", *model);
  EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(), HasSubstr("feature version"));
}

TEST(Snapshot, EmptyTargetIsInvalid) {
  TempDb temp;
  auto model = TrainedModel();
  EXPECT_EQ(SaveSnapshot(temp.db(), "", *model).status().code(), StatusCode::kInvalidArgument);
}

TEST(RecordThroughput, LabelsByStatus) {
  auto workload = Workload("matmul(M=8,N=8,K=8)");
  v1::Trace trace;
  v1::TuningRecord ok = MakeRecord(*workload, trace, 1, v1::MEASURE_STATUS_OK, 0.5);
  EXPECT_DOUBLE_EQ(*RecordThroughput(ok, 0), workload->flops() / 0.5);
  ok.mutable_workload()->set_flops(0);
  EXPECT_DOUBLE_EQ(*RecordThroughput(ok, 100), 200.0);
  EXPECT_EQ(*RecordThroughput(MakeRecord(*workload, trace, 2, v1::MEASURE_STATUS_WRONG_RESULT, 0), 1),
            0.0);
  EXPECT_EQ(*RecordThroughput(MakeRecord(*workload, trace, 3, v1::MEASURE_STATUS_TIMEOUT, 0), 1), 0.0);
  EXPECT_FALSE(
      RecordThroughput(MakeRecord(*workload, trace, 4, v1::MEASURE_STATUS_COMPILE_ERROR, 0), 1));
}

TEST(Pretrain, ReplaysRecordsIntoTheModel) {
  TempDb temp;
  auto workload = Workload("matmul(M=16,N=16,K=16)");
  std::vector<v1::TuningRecord> records;
  std::vector<std::vector<float>> expected_features;
  int64_t seq = 0;
  for (uint64_t seed = 1; records.size() < 40 && seed < 400; ++seed) {
    schedule::Schedule sch = testing::RandomSchedule(workload, seed);
    StatusOr<lower::LoweredFunc> func = lower::Lower(sch);
    if (!func.ok()) continue;
    v1::Trace trace;
    schedule::TraceToProto(sch.trace(), &trace);
    records.push_back(MakeRecord(*workload, trace, ++seq, v1::MEASURE_STATUS_OK,
                                 1e-4 * double(1 + seed % 7)));
    expected_features.push_back(ExtractFeatures(*func));
  }
  ASSERT_EQ(records.size(), 40u);
  // Two failures that ran (label 0) and one compile error (no label).
  v1::Trace first_trace = records[0].trace();
  records.push_back(MakeRecord(*workload, first_trace, ++seq, v1::MEASURE_STATUS_RUNTIME_ERROR, 0));
  records.push_back(MakeRecord(*workload, first_trace, ++seq, v1::MEASURE_STATUS_WRONG_RESULT, 0));
  records.push_back(MakeRecord(*workload, first_trace, ++seq, v1::MEASURE_STATUS_COMPILE_ERROR, 0));
  // A trace naming a block the workload does not have: it no longer replays.
  v1::Trace bad;
  bad.set_version(1);
  v1::Instruction* get_block = bad.add_instructions();
  get_block->set_kind("get_block");
  get_block->add_str_attrs("NoSuchBlock");
  get_block->add_outputs(0);
  records.push_back(MakeRecord(*workload, bad, ++seq, v1::MEASURE_STATUS_OK, 1e-3));
  // A record of another target is not read.
  v1::TuningRecord other = records[1];
  other.mutable_target()->set_target("llvm -mcpu=generic");
  records.push_back(other);
  auto inserted = temp.db().InsertRecords(records);
  ASSERT_TRUE(inserted.ok()) << inserted.status().ToString();

  auto model = MakeXgbCostModel();
  ASSERT_TRUE(model.ok());
  auto stats = PretrainFromDatabase(temp.db(), kTarget, **model);
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_EQ(stats->records, 44);
  EXPECT_EQ(stats->samples, 42);
  EXPECT_EQ(stats->skipped_no_label, 1);
  EXPECT_EQ(stats->skipped_replay, 1);
  EXPECT_EQ(stats->skipped_workload, 0);
  EXPECT_EQ((*model)->num_samples(), 42);
  // Trained on them: predictions are no longer all zero.
  auto scores = (*model)->Predict(expected_features);
  ASSERT_TRUE(scores.ok());
  EXPECT_THAT(*scores, ::testing::Contains(::testing::Ne(0.0)));

  // The features pre-training computed are the ones the search computes for the same trace.
  auto f = FeaturizeTrace(workload, records[0].trace());
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(*f, expected_features[0]);
}

}  // namespace
}  // namespace tuned::costmodel

// Writes and queries of the tuning log, the same assertions on every backend: SQLite files and
// PostgreSQL schemas on the test server (skipped, with the reason, where there is none).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/unit/tuning_db/backend_test_util.h"
#include "tests/unit/tuning_db/db_test_util.h"
#include "tuning_db/database.h"
#include "tuning_db/trace_hash.h"

namespace tuned::db {
namespace {

using ::testing::HasSubstr;
using testing::Backend;
using testing::kCpu;
using testing::kGpu;
using testing::MakeRecord;
using testing::MatmulKey;
using testing::OpenLogOrFail;
using testing::ScratchLog;

class StoreTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    TUNED_SKIP_UNLESS_BACKEND(GetParam());
    log_ = std::make_unique<ScratchLog>(GetParam());
    db_ = OpenLogOrFail(log_->location());
    ASSERT_NE(db_, nullptr);
  }
  std::unique_ptr<ScratchLog> log_;
  std::unique_ptr<Database> db_;  // Closed before its log is removed.
};

INSTANTIATE_TEST_SUITE_P(Backends, StoreTest, ::testing::ValuesIn(testing::AllBackends()),
                         [](const auto& info) { return testing::BackendName(info.param); });

TEST_P(StoreTest, DatabaseIdSurvivesReopening) {
  EXPECT_EQ(db_->database_id().size(), 32u);
  auto reopened = OpenLogOrFail(log_->location());
  ASSERT_NE(reopened, nullptr);
  EXPECT_EQ(reopened->database_id(), db_->database_id());
  EXPECT_NE(OpenLogOrFail(log_->Another())->database_id(), db_->database_id());
}

TEST_P(StoreTest, InsertedRecordRoundTrips) {
  v1::TuningRecord record = MakeRecord(64, kCpu, 1, 0.002);
  auto id = db_->InsertRecord(record);
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  auto stored = db_->GetRecord(*id);
  ASSERT_TRUE(stored.ok()) << stored.status().ToString();
  EXPECT_EQ(stored->record_id(), *id);
  EXPECT_EQ(stored->workload().key(), MatmulKey(64));
  EXPECT_EQ(stored->workload().key_sha256().size(), 64u);
  EXPECT_EQ(stored->target().target(), kCpu);
  EXPECT_EQ(stored->target().kind(), v1::TARGET_KIND_LLVM_CPU);
  EXPECT_EQ(stored->trace().SerializeAsString(), record.trace().SerializeAsString());
  EXPECT_EQ(stored->trace_hash(), TraceHash(record.trace()));
  EXPECT_EQ(stored->result().repeat_seconds_size(), 3);
  EXPECT_DOUBLE_EQ(stored->result().median_seconds(), 0.002);
  EXPECT_EQ(stored->result().device().model(), "AMD EPYC 7B13");
  EXPECT_EQ(stored->config().repeat(), 3u);
  EXPECT_EQ(stored->tuner_version(), "0.1.0");
  EXPECT_EQ(stored->task_id(), "task-a");
  EXPECT_EQ(stored->created_unix_ms(), record.created_unix_ms());
  EXPECT_EQ(stored->origin(), db_->database_id());
}

TEST_P(StoreTest, MissingTimestampIsStampedOnInsert) {
  v1::TuningRecord record = MakeRecord(64, kCpu, 1, 0.002);
  record.set_created_unix_ms(0);
  auto id = db_->InsertRecord(record);
  ASSERT_TRUE(id.ok());
  EXPECT_GT(db_->GetRecord(*id)->created_unix_ms(), 1700000000000);
}

TEST_P(StoreTest, DuplicateRecordIsSkippedAndReportsExistingId) {
  std::vector<v1::TuningRecord> batch = {MakeRecord(64, kCpu, 1, 0.002),
                                         MakeRecord(64, kCpu, 2, 0.003)};
  auto first = db_->InsertRecords(batch);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->inserted, 2);
  auto second = db_->InsertRecords(batch);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->inserted, 0);
  EXPECT_EQ(second->duplicates, 2);
  EXPECT_EQ(second->record_ids, first->record_ids);
  // The same trace measured by another worker is another measurement.
  batch[0].mutable_result()->set_worker_id("worker-2");
  auto third = db_->InsertRecords(std::span(batch.data(), 1));
  ASSERT_TRUE(third.ok());
  EXPECT_EQ(third->inserted, 1);
}

TEST_P(StoreTest, InvalidRecordRejectsWholeBatch) {
  std::vector<v1::TuningRecord> batch = {MakeRecord(64, kCpu, 1, 0.002),
                                         MakeRecord(64, kCpu, 2, 0.003)};
  batch[1].set_trace_hash("0000");
  auto result = db_->InsertRecords(batch);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(result.status().message(), HasSubstr("record 1: trace_hash does not match"));
  EXPECT_EQ(db_->Stats()->num_records, 0);

  batch[1] = MakeRecord(64, kCpu, 2, 0.0);
  result = db_->InsertRecords(batch);
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(result.status().message(), HasSubstr("positive median_seconds"));

  batch[1] = MakeRecord(64, "", 2, 0.1);
  result = db_->InsertRecords(batch);
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(result.status().message(), HasSubstr("record 1: has no target"));

  batch[1] = MakeRecord(64, kCpu, 2, 0.1);
  batch[1].mutable_workload()->set_key_sha256("abc");
  result = db_->InsertRecords(batch);
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(result.status().message(), HasSubstr("key_sha256 is not the SHA-256"));
  EXPECT_EQ(db_->Stats()->num_records, 0);
}

TEST_P(StoreTest, BestRecordsAreOkRecordsOrderedByMedian) {
  std::vector<v1::TuningRecord> batch = {
      MakeRecord(64, kCpu, 1, 0.005),
      MakeRecord(64, kCpu, 2, 0.001),
      MakeRecord(64, kCpu, 3, 0.0, v1::MEASURE_STATUS_WRONG_RESULT),
      MakeRecord(64, kCpu, 4, 0.003),
      MakeRecord(64, kGpu, 5, 0.0001),
      MakeRecord(128, kCpu, 6, 0.0001)};
  ASSERT_TRUE(db_->InsertRecords(batch).ok());
  auto best = db_->GetBestRecords({MatmulKey(64), kCpu, "", 2});
  ASSERT_TRUE(best.ok()) << best.status().ToString();
  ASSERT_EQ(best->records.size(), 2u);
  EXPECT_DOUBLE_EQ(best->records[0].result().median_seconds(), 0.001);
  EXPECT_DOUBLE_EQ(best->records[1].result().median_seconds(), 0.003);
  EXPECT_TRUE(best->miss_reason.empty());
  auto all = db_->GetBestRecords({MatmulKey(64), kCpu, "", 10});
  EXPECT_EQ(all->records.size(), 3u);  // The wrong result never ranks.
}

// What a resumed run has spent: the search trials of the workload on the target, failures
// included; re-measures, finals, other targets and other workloads are not counted.
TEST_P(StoreTest, BestRecordsCountTheSearchTrialsOfTheWorkloadOnTheTarget) {
  v1::TuningRecord remeasure = MakeRecord(64, kCpu, 1, 0.004);
  remeasure.set_kind(v1::RECORD_KIND_REMEASURE);
  remeasure.set_created_unix_ms(remeasure.created_unix_ms() + 100);
  v1::TuningRecord final_record = MakeRecord(64, kCpu, 2, 0.002);
  final_record.set_kind(v1::RECORD_KIND_FINAL);
  final_record.set_created_unix_ms(final_record.created_unix_ms() + 100);
  std::vector<v1::TuningRecord> batch = {MakeRecord(64, kCpu, 1, 0.005),
                                         MakeRecord(64, kCpu, 2, 0.001),
                                         MakeRecord(64, kCpu, 3, 0.0, v1::MEASURE_STATUS_RUNTIME_ERROR),
                                         remeasure,
                                         final_record,
                                         MakeRecord(64, kGpu, 4, 0.0001),
                                         MakeRecord(128, kCpu, 5, 0.0001)};
  ASSERT_TRUE(db_->InsertRecords(batch).ok());
  auto best = db_->GetBestRecords({MatmulKey(64), kCpu, "", 1});
  ASSERT_TRUE(best.ok()) << best.status().ToString();
  ASSERT_EQ(best->records.size(), 1u);
  EXPECT_EQ(best->trials, 3);
  auto on_gpu = db_->GetBestRecords({MatmulKey(64), kGpu, "", 1});
  ASSERT_TRUE(on_gpu.ok());
  EXPECT_EQ(on_gpu->trials, 1);
  auto unknown = db_->GetBestRecords({MatmulKey(65), kCpu, "", 1});
  ASSERT_TRUE(unknown.ok());
  EXPECT_EQ(unknown->trials, 0);
}

TEST_P(StoreTest, BestRecordsMissReasonForUnknownWorkload) {
  ASSERT_TRUE(db_->InsertRecord(MakeRecord(64, kCpu, 1, 0.001)).ok());
  auto best = db_->GetBestRecords({MatmulKey(65), kCpu, "", 1});
  ASSERT_TRUE(best.ok());
  EXPECT_TRUE(best->records.empty());
  EXPECT_EQ(best->miss_reason, "no workload with key '" + MatmulKey(65) + "'");
}

TEST_P(StoreTest, BestRecordsMissReasonNamesOtherTargets) {
  ASSERT_TRUE(db_->InsertRecord(MakeRecord(64, kGpu, 1, 0.001)).ok());
  auto best = db_->GetBestRecords({MatmulKey(64), kCpu, "", 1});
  ASSERT_TRUE(best.ok());
  EXPECT_TRUE(best->records.empty());
  EXPECT_THAT(best->miss_reason, HasSubstr("for target '" + std::string(kCpu) + "'"));
  EXPECT_THAT(best->miss_reason, HasSubstr("records exist for other targets: '" +
                                           std::string(kGpu) + "' (1 ok of 1)"));
}

TEST_P(StoreTest, BestRecordsMissReasonCountsFailures) {
  ASSERT_TRUE(
      db_->InsertRecords(std::vector{MakeRecord(64, kCpu, 1, 0, v1::MEASURE_STATUS_COMPILE_ERROR),
                                     MakeRecord(64, kCpu, 2, 0, v1::MEASURE_STATUS_COMPILE_ERROR),
                                     MakeRecord(64, kCpu, 3, 0, v1::MEASURE_STATUS_TIMEOUT)})
          .ok());
  auto best = db_->GetBestRecords({MatmulKey(64), kCpu, "", 1});
  ASSERT_TRUE(best.ok());
  EXPECT_TRUE(best->records.empty());
  EXPECT_THAT(best->miss_reason, HasSubstr("all 3 records"));
  EXPECT_THAT(best->miss_reason, HasSubstr("failed (2 compile_error, 1 timeout)"));
}

TEST_P(StoreTest, BestRecordsMissReasonForWorkloadWithoutRecords) {
  v1::Workload workload;
  workload.set_key(MatmulKey(32));
  ASSERT_TRUE(db_->PutWorkload(workload).ok());
  auto best = db_->GetBestRecords({MatmulKey(32), kCpu, "", 1});
  ASSERT_TRUE(best.ok());
  EXPECT_EQ(best->miss_reason, "workload '" + MatmulKey(32) + "' has no records");
}

TEST_P(StoreTest, BestRecordsFilterByDeviceExplainsOtherDevices) {
  v1::TuningRecord record = MakeRecord(64, kGpu, 1, 0.001);
  record.mutable_result()->mutable_device()->set_model("NVIDIA H100");
  ASSERT_TRUE(db_->InsertRecord(record).ok());
  auto on_h100 = db_->GetBestRecords({MatmulKey(64), kGpu, "NVIDIA H100", 1});
  ASSERT_EQ(on_h100->records.size(), 1u);
  auto on_a100 = db_->GetBestRecords({MatmulKey(64), kGpu, "NVIDIA A100", 1});
  ASSERT_TRUE(on_a100->records.empty());
  EXPECT_THAT(on_a100->miss_reason, HasSubstr("on device 'NVIDIA A100'"));
  EXPECT_THAT(on_a100->miss_reason, HasSubstr("'NVIDIA H100' (1)"));
}

TEST_P(StoreTest, BestRecordsRejectsNonPositiveLimit) {
  auto best = db_->GetBestRecords({MatmulKey(64), kCpu, "", 0});
  ASSERT_FALSE(best.ok());
  EXPECT_EQ(best.status().code(), StatusCode::kInvalidArgument);
}

TEST_P(StoreTest, TaskRecordsComeInInsertionOrder) {
  std::vector<v1::TuningRecord> batch;
  for (int i = 0; i < 5; ++i) {
    batch.push_back(MakeRecord(64, kCpu, 10 - i, 0.001 * (i + 1)));
    batch.back().set_task_id(i % 2 == 0 ? "task-even" : "task-odd");
  }
  auto inserted = db_->InsertRecords(batch);
  ASSERT_TRUE(inserted.ok());
  auto even = db_->TaskRecords("task-even");
  ASSERT_TRUE(even.ok());
  ASSERT_EQ(even->size(), 3u);
  EXPECT_EQ((*even)[0].record_id(), inserted->record_ids[0]);
  EXPECT_EQ((*even)[1].record_id(), inserted->record_ids[2]);
  EXPECT_EQ((*even)[2].record_id(), inserted->record_ids[4]);
  EXPECT_TRUE(db_->TaskRecords("task-none")->empty());
}

TEST_P(StoreTest, HasMeasuredMatchesWorkloadTargetAndTrace) {
  v1::TuningRecord record = MakeRecord(64, kCpu, 1, 0, v1::MEASURE_STATUS_RUNTIME_ERROR);
  ASSERT_TRUE(db_->InsertRecord(record).ok());
  const std::string hash = TraceHash(record.trace());
  EXPECT_TRUE(*db_->HasMeasured(MatmulKey(64), kCpu, hash));  // Failures count as measured.
  EXPECT_FALSE(*db_->HasMeasured(MatmulKey(64), kGpu, hash));
  EXPECT_FALSE(*db_->HasMeasured(MatmulKey(128), kCpu, hash));
  EXPECT_FALSE(
      *db_->HasMeasured(MatmulKey(64), kCpu, TraceHash(MakeRecord(64, kCpu, 2, 1).trace())));
}

TEST_P(StoreTest, MeasuredTraceHashesAnswersManyTracesAtOnce) {
  std::vector<v1::TuningRecord> records;
  std::vector<std::string> asked;
  for (int i = 0; i < 150; ++i) {
    v1::TuningRecord record = MakeRecord(64, kCpu, i, 0, v1::MEASURE_STATUS_RUNTIME_ERROR);
    asked.push_back(TraceHash(record.trace()));
    if (i % 3 == 0) records.push_back(record);  // every third one was measured
  }
  ASSERT_TRUE(db_->InsertRecords(records).ok());
  asked.push_back("not-a-hash");
  auto measured = db_->MeasuredTraceHashes(MatmulKey(64), kCpu, asked);
  ASSERT_TRUE(measured.ok()) << measured.status().message();
  EXPECT_EQ(measured->size(), records.size());
  for (size_t i = 0; i < 150; ++i) {
    EXPECT_EQ(measured->contains(asked[i]), i % 3 == 0) << i;
    EXPECT_EQ(measured->contains(asked[i]), *db_->HasMeasured(MatmulKey(64), kCpu, asked[i])) << i;
  }
  EXPECT_TRUE(db_->MeasuredTraceHashes(MatmulKey(64), kGpu, asked)->empty());
  EXPECT_TRUE(db_->MeasuredTraceHashes(MatmulKey(128), kCpu, asked)->empty());
  EXPECT_TRUE(db_->MeasuredTraceHashes(MatmulKey(64), kCpu, {})->empty());
}

TEST_P(StoreTest, ListWorkloadsSummarizesRecords) {
  ASSERT_TRUE(
      db_->InsertRecords(std::vector{MakeRecord(64, kCpu, 1, 0.004), MakeRecord(64, kGpu, 2, 0.002),
                                     MakeRecord(64, kCpu, 3, 0, v1::MEASURE_STATUS_TIMEOUT),
                                     MakeRecord(128, kCpu, 4, 0.01)})
          .ok());
  auto workloads = db_->ListWorkloads();
  ASSERT_TRUE(workloads.ok());
  ASSERT_EQ(workloads->size(), 2u);
  const WorkloadSummary& w128 = (*workloads)[0];  // Sorted by key: "M=128" < "M=64".
  const WorkloadSummary& w64 = (*workloads)[1];
  EXPECT_EQ(w128.workload.key(), MatmulKey(128));
  EXPECT_EQ(w64.num_records, 3);
  EXPECT_EQ(w64.num_ok, 2);
  EXPECT_DOUBLE_EQ(w64.best_median_seconds, 0.002);
  EXPECT_EQ(w64.targets, (std::vector<std::string>{kGpu, kCpu}));  // Sorted: "cuda" < "llvm".
  EXPECT_EQ(w64.last_unix_ms, 1700000000003);
  EXPECT_EQ(*db_->ListTargets(MatmulKey(128)), std::vector<std::string>{kCpu});
  EXPECT_EQ(*db_->ListTargets(""), (std::vector<std::string>{kGpu, kCpu}));
}

TEST_P(StoreTest, PutWorkloadKeepsFirstButFillsUnknownFlops) {
  v1::Workload workload;
  workload.set_key(MatmulKey(32));
  workload.set_op("matmul");
  ASSERT_TRUE(db_->PutWorkload(workload).ok());
  workload.set_flops(1e6);
  workload.set_op("changed");
  ASSERT_TRUE(db_->PutWorkload(workload).ok());
  auto stored = db_->GetWorkload(MatmulKey(32));
  ASSERT_TRUE(stored.ok());
  EXPECT_DOUBLE_EQ(stored->flops(), 1e6);
  workload.set_flops(2e6);
  ASSERT_TRUE(db_->PutWorkload(workload).ok());
  EXPECT_DOUBLE_EQ(db_->GetWorkload(MatmulKey(32))->flops(), 1e6);
  auto missing = db_->GetWorkload(MatmulKey(33));
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(db_->PutWorkload(v1::Workload()).code(), StatusCode::kInvalidArgument);
}

TEST_P(StoreTest, ListRecordsFiltersAndPages) {
  std::vector<v1::TuningRecord> batch;
  for (int i = 0; i < 7; ++i) batch.push_back(MakeRecord(i % 2 ? 64 : 128, kCpu, i, 0.001));
  ASSERT_TRUE(db_->InsertRecords(batch).ok());
  RecordFilter filter;
  filter.workload_key = MatmulKey(64);
  filter.limit = 2;
  std::vector<int64_t> ids;
  while (true) {
    auto page = db_->ListRecords(filter);
    ASSERT_TRUE(page.ok());
    if (page->empty()) break;
    for (const auto& record : *page) ids.push_back(record.record_id());
    filter.after_id = page->back().record_id();
  }
  EXPECT_EQ(ids, (std::vector<int64_t>{2, 4, 6}));
  filter = RecordFilter();
  filter.target = kGpu;
  EXPECT_TRUE(db_->ListRecords(filter)->empty());
}

TEST_P(StoreTest, StatsCountEverything) {
  ASSERT_TRUE(
      db_->InsertRecords(std::vector{MakeRecord(64, kCpu, 1, 0.004),
                                     MakeRecord(64, kCpu, 3, 0, v1::MEASURE_STATUS_TIMEOUT)})
          .ok());
  v1::TaskStatus task;
  task.set_task_id("t1");
  task.set_state(v1::TASK_STATE_RUNNING);
  ASSERT_TRUE(db_->SaveTask(task).ok());
  auto stats = db_->Stats();
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_EQ(stats->schema_version, 4);  // migration 4: record keys, calibrations
  EXPECT_EQ(stats->num_workloads, 1);
  EXPECT_EQ(stats->num_targets, 1);
  EXPECT_EQ(stats->num_records, 2);
  EXPECT_EQ(stats->num_tasks, 1);
  EXPECT_GT(stats->file_bytes, 0);
  ASSERT_EQ(stats->records_by_status.size(), 2u);
  EXPECT_EQ(stats->records_by_status[0], std::make_pair(v1::MEASURE_STATUS_OK, int64_t{1}));
  EXPECT_EQ(stats->records_by_status[1], std::make_pair(v1::MEASURE_STATUS_TIMEOUT, int64_t{1}));
  ASSERT_EQ(stats->targets.size(), 1u);
  EXPECT_EQ(stats->targets[0].device_description, "AMD EPYC 7B13");
  EXPECT_EQ(stats->tasks_by_state[0], std::make_pair(v1::TASK_STATE_RUNNING, int64_t{1}));
}

TEST_P(StoreTest, TaskStateSavesLoadsAndListsByState) {
  auto best_id = db_->InsertRecord(MakeRecord(64, kCpu, 1, 0.002));
  ASSERT_TRUE(best_id.ok());
  v1::TaskStatus task;
  task.set_task_id("t1");
  task.mutable_spec()->set_workload_spec(MatmulKey(64));
  task.mutable_spec()->mutable_target()->set_target(kCpu);
  task.mutable_spec()->set_trial_budget(100);
  task.set_state(v1::TASK_STATE_RUNNING);
  task.set_trials_done(10);
  task.set_updated_unix_ms(1000);
  ASSERT_TRUE(db_->SaveTask(task).ok());
  task.set_trials_done(20);
  task.mutable_best()->set_record_id(*best_id);
  task.set_updated_unix_ms(2000);
  ASSERT_TRUE(db_->SaveTask(task).ok());
  v1::TaskStatus other;
  other.set_task_id("t0");
  other.set_state(v1::TASK_STATE_SUCCEEDED);
  other.set_updated_unix_ms(500);
  ASSERT_TRUE(db_->SaveTask(other).ok());

  auto loaded = db_->LoadTask("t1");
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(loaded->trials_done(), 20u);
  EXPECT_EQ(loaded->spec().trial_budget(), 100u);
  EXPECT_EQ(loaded->state(), v1::TASK_STATE_RUNNING);
  EXPECT_EQ(loaded->best().record_id(), *best_id);
  EXPECT_DOUBLE_EQ(loaded->best().result().median_seconds(), 0.002);

  auto running = db_->ListTasks(v1::TASK_STATE_RUNNING);
  ASSERT_EQ(running->size(), 1u);
  EXPECT_EQ((*running)[0].task_id(), "t1");
  auto all = db_->ListTasks(std::nullopt);
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].task_id(), "t0");  // Least recently updated first.
  EXPECT_EQ(db_->LoadTask("nope").status().code(), StatusCode::kNotFound);
}

TEST_P(StoreTest, TaskWithUnknownBestRecordIsRejected) {
  v1::TaskStatus task;
  task.set_task_id("t1");
  task.mutable_best()->set_record_id(42);
  Status status = db_->SaveTask(task);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("best record 42 is not in the database"));
  EXPECT_EQ(db_->SaveTask(v1::TaskStatus()).code(), StatusCode::kInvalidArgument);
}

TEST_P(StoreTest, LatestCostModelSnapshotPerTarget) {
  EXPECT_EQ(db_->LatestCostModelSnapshot(kCpu).status().code(), StatusCode::kNotFound);
  for (int i = 1; i <= 6; ++i) {
    CostModelSnapshot snapshot{
        kCpu, "xgboost-json", 3, 100 * i, "model-" + std::to_string(i), 1000 + i, ""};
    auto added = db_->SaveCostModelSnapshot(snapshot);
    ASSERT_TRUE(added.ok()) << added.status().ToString();
    EXPECT_TRUE(*added);
  }
  ASSERT_TRUE(db_->SaveCostModelSnapshot({kGpu, "xgboost-json", 3, 1, "gpu-model", 5, ""}).ok());
  auto latest = db_->LatestCostModelSnapshot(kCpu);
  ASSERT_TRUE(latest.ok());
  EXPECT_EQ(latest->model, "model-6");
  EXPECT_EQ(latest->num_records, 600);
  EXPECT_EQ(latest->feature_version, 3u);
  EXPECT_EQ(latest->origin, db_->database_id());
  EXPECT_EQ(db_->LatestCostModelSnapshot(kGpu)->model, "gpu-model");
  // Only the newest kKeptSnapshotsPerTarget per target are kept.
  EXPECT_EQ(db_->Stats()->num_snapshots, kKeptSnapshotsPerTarget + 1);
  // Saving the same snapshot again, or one older than every kept one, adds nothing.
  EXPECT_FALSE(*db_->SaveCostModelSnapshot({kCpu, "xgboost-json", 3, 600, "model-6", 1006, ""}));
  EXPECT_FALSE(*db_->SaveCostModelSnapshot({kCpu, "xgboost-json", 3, 1, "old", 1, ""}));
  EXPECT_EQ(db_->LatestCostModelSnapshot(kCpu)->model, "model-6");
}

TEST_P(StoreTest, WorkerLossesAreCountedPerTraceAcrossReopening) {
  const std::string hash = TraceHash(MakeRecord(64, kCpu, 1, 0).trace());
  EXPECT_EQ(*db_->WorkerLosses(MatmulKey(64), kCpu, hash), 0);
  auto first = db_->CountWorkerLoss(MatmulKey(64), kCpu, hash, "worker 'a' stream ended");
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(*first, 1);
  EXPECT_EQ(*db_->CountWorkerLoss(MatmulKey(64), kGpu, hash, "other target"), 1);
  auto reopened = OpenLogOrFail(log_->location());
  ASSERT_NE(reopened, nullptr);
  EXPECT_EQ(*reopened->CountWorkerLoss(MatmulKey(64), kCpu, hash, "worker 'b' silent"), 2);
  EXPECT_EQ(*db_->WorkerLosses(MatmulKey(64), kCpu, hash), 2);
  EXPECT_EQ(*db_->WorkerLosses(MatmulKey(128), kCpu, hash), 0);
}

TEST_P(StoreTest, QuarantinedTracesAreTheHarmfulRecordsWithTheirReasons) {
  v1::TuningRecord crashed = MakeRecord(64, kCpu, 1, 0, v1::MEASURE_STATUS_RUNTIME_ERROR);
  crashed.mutable_result()->set_error("kernel killed by SIGSEGV");
  v1::TuningRecord hung = MakeRecord(64, kCpu, 2, 0, v1::MEASURE_STATUS_BUILD_TIMEOUT);
  hung.mutable_result()->set_error("build still running");
  std::vector<v1::TuningRecord> batch = {
      MakeRecord(64, kCpu, 3, 0.001), crashed,
      MakeRecord(64, kCpu, 4, 0, v1::MEASURE_STATUS_COMPILE_ERROR), hung,
      MakeRecord(128, kCpu, 5, 0, v1::MEASURE_STATUS_WRONG_RESULT)};
  ASSERT_TRUE(db_->InsertRecords(batch).ok());
  auto one = db_->ListQuarantined(MatmulKey(64));
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  ASSERT_EQ(one->size(), 2u);
  EXPECT_EQ((*one)[0].status, v1::MEASURE_STATUS_RUNTIME_ERROR);
  EXPECT_EQ((*one)[0].reason, "kernel killed by SIGSEGV");
  EXPECT_EQ((*one)[0].trace_hash, TraceHash(crashed.trace()));
  EXPECT_EQ((*one)[0].target, kCpu);
  EXPECT_EQ((*one)[1].status, v1::MEASURE_STATUS_BUILD_TIMEOUT);
  EXPECT_EQ((*one)[1].reason, "build still running");
  auto all = db_->ListQuarantined("");
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[2].workload_key, MatmulKey(128));
}

TEST_P(StoreTest, UnverifiedRecordsRankOnlyWhenTheLookupAllowsThem) {
  v1::TuningRecord unverified = MakeRecord(64, kCpu, 1, 0.0001);
  unverified.mutable_config()->set_verify(false);
  v1::TuningRecord verified = MakeRecord(64, kCpu, 2, 0.002);
  verified.mutable_config()->set_verify(true);
  v1::TuningRecord unset = MakeRecord(64, kCpu, 3, 0.003);  // verify absent: verified
  ASSERT_TRUE(db_->InsertRecords(std::vector{unverified, verified, unset}).ok());
  auto best = db_->GetBestRecords({MatmulKey(64), kCpu, "", 10});
  ASSERT_TRUE(best.ok()) << best.status().ToString();
  ASSERT_EQ(best->records.size(), 2u);
  EXPECT_DOUBLE_EQ(best->records[0].result().median_seconds(), 0.002);
  BestRecordsQuery allowing{MatmulKey(64), kCpu, "", 10};
  allowing.allow_unverified = true;
  auto with = db_->GetBestRecords(allowing);
  ASSERT_TRUE(with.ok());
  ASSERT_EQ(with->records.size(), 3u);
  EXPECT_DOUBLE_EQ(with->records[0].result().median_seconds(), 0.0001);
  EXPECT_FALSE(with->records[0].config().verify());
}

TEST_P(StoreTest, OnlyUnverifiedRecordsMissWithTheReason) {
  v1::TuningRecord unverified = MakeRecord(64, kCpu, 1, 0.0001);
  unverified.mutable_config()->set_verify(false);
  ASSERT_TRUE(db_->InsertRecord(unverified).ok());
  auto best = db_->GetBestRecords({MatmulKey(64), kCpu, "", 1});
  ASSERT_TRUE(best.ok()) << best.status().ToString();
  EXPECT_TRUE(best->records.empty());
  EXPECT_THAT(best->miss_reason, HasSubstr("verification off"));
}

}  // namespace
}  // namespace tuned::db

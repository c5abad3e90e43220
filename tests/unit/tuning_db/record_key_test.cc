// The complete key of a record (device, toolkit, code generation, protocol) and the ranking of
// re-measured records, the same on every backend; calibration figures round-trip.

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
using testing::MakeRecord;
using testing::MatmulKey;
using testing::OpenLogOrFail;
using testing::ScratchLog;

class RecordKeyTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    TUNED_SKIP_UNLESS_BACKEND(GetParam());
    log_ = std::make_unique<ScratchLog>(GetParam());
    db_ = OpenLogOrFail(log_->location());
    ASSERT_NE(db_, nullptr);
  }
  // A record of trace `seq` with the given key fields and kind.
  v1::TuningRecord Keyed(int64_t seq, double median, const std::string& toolkit,
                         uint32_t codegen, uint32_t protocol,
                         v1::RecordKind kind = v1::RECORD_KIND_SEARCH) {
    v1::TuningRecord record = MakeRecord(64, kCpu, seq, median);
    record.mutable_result()->mutable_device()->set_toolkit_version(toolkit);
    record.set_codegen_version(codegen);
    record.mutable_config()->set_protocol_version(protocol);
    record.set_kind(kind);
    record.set_created_unix_ms(record.created_unix_ms() + next_ms_++);  // its own identity
    return record;
  }
  int64_t Insert(const v1::TuningRecord& record) {
    auto id = db_->InsertRecord(record);
    EXPECT_TRUE(id.ok()) << id.status().ToString();
    return id.ok() ? *id : 0;
  }
  std::unique_ptr<ScratchLog> log_;
  std::unique_ptr<Database> db_;
  int64_t next_ms_ = 1;
};

INSTANTIATE_TEST_SUITE_P(Backends, RecordKeyTest, ::testing::ValuesIn(testing::AllBackends()),
                         [](const auto& info) { return testing::BackendName(info.param); });

TEST_P(RecordKeyTest, KindAndCodegenVersionRoundTrip) {
  int64_t id = Insert(Keyed(1, 0.002, "LLVM 16.0.6", 7, 1, v1::RECORD_KIND_FINAL));
  auto stored = db_->GetRecord(id);
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(stored->kind(), v1::RECORD_KIND_FINAL);
  EXPECT_EQ(stored->codegen_version(), 7u);
}

TEST_P(RecordKeyTest, BestLookupMatchesEveryFieldOfTheKey) {
  Insert(Keyed(1, 0.001, "LLVM 15.0.7", 1, 1));
  Insert(Keyed(2, 0.002, "LLVM 16.0.6", 1, 1));
  Insert(Keyed(3, 0.003, "LLVM 16.0.6", 2, 1));
  Insert(Keyed(4, 0.004, "LLVM 16.0.6", 1, 2));
  BestRecordsQuery query{MatmulKey(64), kCpu, "", 10};
  query.toolkit_version = "LLVM 16.0.6";
  query.codegen_version = 1;
  query.protocol_version = 1;
  auto best = db_->GetBestRecords(query);
  ASSERT_TRUE(best.ok()) << best.status().ToString();
  ASSERT_EQ(best->records.size(), 1u);
  EXPECT_DOUBLE_EQ(best->records[0].result().median_seconds(), 0.002);
  query.toolkit_version.clear();  // any toolkit
  best = db_->GetBestRecords(query);
  ASSERT_EQ(best->records.size(), 2u);
  EXPECT_DOUBLE_EQ(best->records[0].result().median_seconds(), 0.001);
}

TEST_P(RecordKeyTest, RecordsBeforeTheVersionFieldsMatchAnyVersion) {
  Insert(Keyed(1, 0.001, "", 0, 1));  // as a record of schema 3 reads
  BestRecordsQuery query{MatmulKey(64), kCpu, "", 10};
  query.toolkit_version = "LLVM 16.0.6";
  query.codegen_version = 1;
  auto best = db_->GetBestRecords(query);
  ASSERT_TRUE(best.ok());
  EXPECT_EQ(best->records.size(), 1u);
}

TEST_P(RecordKeyTest, MissReasonNamesTheVersionsThatExist) {
  Insert(Keyed(1, 0.001, "LLVM 15.0.7", 3, 1));
  BestRecordsQuery query{MatmulKey(64), kCpu, "", 1};
  query.codegen_version = 4;
  auto best = db_->GetBestRecords(query);
  ASSERT_TRUE(best.ok());
  ASSERT_TRUE(best->records.empty());
  EXPECT_THAT(best->miss_reason, HasSubstr("of code generation 4"));
  EXPECT_THAT(best->miss_reason, HasSubstr("code generation 3 (1)"));
  query.codegen_version = 0;
  query.toolkit_version = "LLVM 16.0.6";
  best = db_->GetBestRecords(query);
  ASSERT_TRUE(best->records.empty());
  EXPECT_THAT(best->miss_reason, HasSubstr("with toolkit 'LLVM 16.0.6'"));
  EXPECT_THAT(best->miss_reason, HasSubstr("toolkit 'LLVM 15.0.7' (1)"));
}

TEST_P(RecordKeyTest, HasMeasuredTakesTheKey) {
  v1::TuningRecord record = Keyed(1, 0.001, "LLVM 16.0.6", 2, 1);
  Insert(record);
  const std::string hash = TraceHash(record.trace());
  MeasurementKey same{"AMD EPYC 7B13", "LLVM 16.0.6", 2, 1};
  EXPECT_TRUE(*db_->HasMeasured(MatmulKey(64), kCpu, hash, same));
  EXPECT_TRUE(*db_->HasMeasured(MatmulKey(64), kCpu, hash));  // any key
  for (MeasurementKey other : {MeasurementKey{"Other CPU", "", 0, 0},
                               MeasurementKey{"", "LLVM 17.0.0", 0, 0},
                               MeasurementKey{"", "", 3, 0}, MeasurementKey{"", "", 0, 2}}) {
    EXPECT_FALSE(*db_->HasMeasured(MatmulKey(64), kCpu, hash, other));
    auto measured = db_->MeasuredTraceHashes(MatmulKey(64), kCpu, {hash}, other);
    ASSERT_TRUE(measured.ok()) << measured.status().ToString();
    EXPECT_TRUE(measured->empty());
  }
  auto measured = db_->MeasuredTraceHashes(MatmulKey(64), kCpu, {hash}, same);
  ASSERT_TRUE(measured.ok());
  EXPECT_EQ(measured->size(), 1u);

  // A record no device measured (the server's WORKER_LOST) counts on every device: a
  // quarantined trace stays quarantined wherever the task runs.
  v1::TuningRecord lost = Keyed(2, 0, "", 2, 1);
  lost.mutable_result()->set_status(v1::MEASURE_STATUS_WORKER_LOST);
  lost.mutable_result()->mutable_device()->clear_model();
  Insert(lost);
  const std::string lost_hash = TraceHash(lost.trace());
  EXPECT_TRUE(*db_->HasMeasured(MatmulKey(64), kCpu, lost_hash, MeasurementKey{"Other CPU", "", 2, 1}));
  measured = db_->MeasuredTraceHashes(MatmulKey(64), kCpu, {hash, lost_hash},
                                      MeasurementKey{"Other CPU", "", 2, 1});
  ASSERT_TRUE(measured.ok());
  EXPECT_EQ(*measured, std::set<std::string>{lost_hash});
}

TEST_P(RecordKeyTest, ARemeasureReplacesTheFigureItRemeasured) {
  // Trace 1's lucky search sample is fastest; its re-measure is slower than trace 2.
  Insert(Keyed(1, 0.001, "", 1, 1));
  Insert(Keyed(1, 0.004, "", 1, 1, v1::RECORD_KIND_REMEASURE));
  Insert(Keyed(2, 0.002, "", 1, 1));
  auto best = db_->GetBestRecords({MatmulKey(64), kCpu, "", 10});
  ASSERT_TRUE(best.ok()) << best.status().ToString();
  ASSERT_EQ(best->records.size(), 2u);
  EXPECT_DOUBLE_EQ(best->records[0].result().median_seconds(), 0.002);
  EXPECT_DOUBLE_EQ(best->records[1].result().median_seconds(), 0.004);
  EXPECT_EQ(best->records[1].kind(), v1::RECORD_KIND_REMEASURE);
}

TEST_P(RecordKeyTest, FinalRecordsOutrankEverythingElse) {
  Insert(Keyed(1, 0.001, "", 1, 1));  // never re-measured at the end
  Insert(Keyed(2, 0.002, "", 1, 1));
  Insert(Keyed(2, 0.003, "", 1, 1, v1::RECORD_KIND_FINAL));
  auto best = db_->GetBestRecords({MatmulKey(64), kCpu, "", 10});
  ASSERT_TRUE(best.ok());
  ASSERT_EQ(best->records.size(), 1u);
  EXPECT_EQ(best->records[0].kind(), v1::RECORD_KIND_FINAL);
  EXPECT_DOUBLE_EQ(best->records[0].result().median_seconds(), 0.003);
}

TEST_P(RecordKeyTest, CalibrationsRoundTripNewestLast) {
  for (int i = 0; i < 3; ++i) {
    WorkerCalibration calibration;
    calibration.worker_id = "w1";
    calibration.device_model = "AMD EPYC 7B13";
    calibration.median_seconds = 0.001 * (i + 1);
    calibration.repeat_cv = 0.01;
    calibration.drift = double(i);
    calibration.drifted = i == 2;
    calibration.created_unix_ms = 1000 + i;
    ASSERT_TRUE(db_->InsertCalibration(calibration).ok());
  }
  auto listed = db_->ListCalibrations("w1", 2);
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  ASSERT_EQ(listed->size(), 2u);
  EXPECT_DOUBLE_EQ((*listed)[0].median_seconds, 0.002);
  EXPECT_DOUBLE_EQ((*listed)[1].median_seconds, 0.003);
  EXPECT_TRUE((*listed)[1].drifted);
  EXPECT_FALSE((*listed)[0].drifted);
  EXPECT_TRUE(db_->ListCalibrations("w2", 10)->empty());
}

}  // namespace
}  // namespace tuned::db

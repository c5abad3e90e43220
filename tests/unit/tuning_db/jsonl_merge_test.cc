// JSON Lines export/import and merging of databases, between every pair of backends (SQLite
// file to SQLite file, SQLite to PostgreSQL, PostgreSQL to SQLite, PostgreSQL to PostgreSQL).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "tests/unit/tuning_db/backend_test_util.h"
#include "tests/unit/tuning_db/db_test_util.h"
#include "tuning_db/jsonl.h"
#include "tuning_db/merge.h"

namespace tuned::db {
namespace {

using ::testing::HasSubstr;
using testing::Backend;
using testing::BackendName;
using testing::OpenLogOrFail;
using testing::ScratchLog;
using testing::kCpu;
using testing::kGpu;
using testing::MakeRecord;
using testing::MatmulKey;
using testing::OpenOrFail;
using testing::TempDir;

void Fill(Database& db, int seed) {
  std::vector<v1::TuningRecord> batch;
  for (int i = 0; i < 30; ++i) {
    const int64_t seq = seed * 1000 + i;
    batch.push_back(
        MakeRecord(64 + (i % 3), i % 2 ? kCpu : kGpu, seq, 0.001 + 0.0001 * (i % 7),
                   i % 5 == 0 ? v1::MEASURE_STATUS_COMPILE_ERROR : v1::MEASURE_STATUS_OK));
  }
  ASSERT_TRUE(db.InsertRecords(batch).ok());
}

// The best records of every workload and target, as comparable text (row ids removed).
std::string BestRecordsText(Database& db) {
  std::string text;
  for (int m = 64; m < 67; ++m) {
    for (const char* target : {kCpu, kGpu}) {
      auto best = db.GetBestRecords({MatmulKey(m), target, "", 5});
      EXPECT_TRUE(best.ok());
      for (v1::TuningRecord record : best->records) {
        record.set_record_id(0);
        text += record.ShortDebugString() + "\n";
      }
    }
  }
  return text;
}

// Records move from a log of the first backend into one of the second.
struct BackendPair {
  Backend from;
  Backend into;
};

void PrintTo(const BackendPair& pair, std::ostream* out) {
  *out << "from_" << BackendName(pair.from) << "_into_" << BackendName(pair.into);
}

class BetweenBackends : public ::testing::TestWithParam<BackendPair> {
 protected:
  void SetUp() override {
    TUNED_SKIP_UNLESS_BACKEND(GetParam().from);
    TUNED_SKIP_UNLESS_BACKEND(GetParam().into);
    from_log_ = std::make_unique<ScratchLog>(GetParam().from);
    into_log_ = std::make_unique<ScratchLog>(GetParam().into);
  }
  std::unique_ptr<Database> OpenFrom() { return OpenLogOrFail(from_log_->location()); }
  std::unique_ptr<Database> OpenInto() { return OpenLogOrFail(into_log_->location()); }

  std::unique_ptr<ScratchLog> from_log_;
  std::unique_ptr<ScratchLog> into_log_;
};

INSTANTIATE_TEST_SUITE_P(
    Pairs, BetweenBackends,
    ::testing::Values(BackendPair{Backend::kSqlite, Backend::kSqlite},
                      BackendPair{Backend::kSqlite, Backend::kPostgres},
                      BackendPair{Backend::kPostgres, Backend::kSqlite},
                      BackendPair{Backend::kPostgres, Backend::kPostgres}),
    [](const auto& info) {
      return "from_" + BackendName(info.param.from) + "_into_" + BackendName(info.param.into);
    });

TEST_P(BetweenBackends, ExportImportRoundTripKeepsBestRecords) {
  auto source = OpenFrom();
  Fill(*source, 1);
  std::stringstream file;
  auto exported = ExportJsonl(*source, file);
  ASSERT_TRUE(exported.ok());
  EXPECT_EQ(exported->records, 30);
  const std::string text = file.str();
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 30);

  auto target = OpenInto();
  auto imported = ImportJsonl(*target, file, "a.jsonl");
  ASSERT_TRUE(imported.ok()) << imported.status().ToString();
  EXPECT_EQ(imported->lines, 30);
  EXPECT_EQ(imported->inserted, 30);
  const std::string best = BestRecordsText(*source);
  EXPECT_FALSE(best.empty());
  EXPECT_EQ(BestRecordsText(*target), best);
  // Provenance survives: the records still name the database that measured them.
  EXPECT_THAT(best, HasSubstr(source->database_id()));
}

TEST_P(BetweenBackends, ImportTwiceAddsNothing) {
  auto source = OpenFrom();
  Fill(*source, 1);
  std::stringstream file;
  ASSERT_TRUE(ExportJsonl(*source, file).ok());
  const std::string text = file.str();
  auto target = OpenInto();
  std::istringstream first(text);
  ASSERT_TRUE(ImportJsonl(*target, first, "a.jsonl").ok());
  std::istringstream second(text);
  auto again = ImportJsonl(*target, second, "a.jsonl");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->inserted, 0);
  EXPECT_EQ(again->duplicates, 30);
  EXPECT_EQ(target->Stats()->num_records, 30);
}

TEST(Jsonl, BadLineNamesFileAndLine) {
  TempDir dir;
  auto db = OpenOrFail(dir.File("a.db"));
  std::istringstream in(
      "\n{\"workload\": {\"key\": \"k\"}, \"target\": {\"target\": \"t\"}, "
      "\"trace\": {}, \"result\": {\"status\": \"MEASURE_STATUS_TIMEOUT\"}}\n"
      "{not json}\n");
  auto imported = ImportJsonl(*db, in, "logs.jsonl");
  ASSERT_FALSE(imported.ok());
  EXPECT_EQ(imported.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(imported.status().message(), HasSubstr("logs.jsonl:3: not a tuning record"));

  std::istringstream no_key("{\"target\": {\"target\": \"t\"}}\n");
  imported = ImportJsonl(*db, no_key, "x.jsonl");
  ASSERT_FALSE(imported.ok());
  EXPECT_THAT(imported.status().message(), HasSubstr("x.jsonl:1: record has no workload key"));
}

TEST_P(BetweenBackends, MergeBringsEverythingAndIsIdempotent) {
  auto a = OpenInto();
  auto b = OpenFrom();
  Fill(*a, 1);
  Fill(*b, 2);
  v1::Workload lonely;
  lonely.set_key(MatmulKey(999));
  ASSERT_TRUE(b->PutWorkload(lonely).ok());
  ASSERT_TRUE(b->SaveCostModelSnapshot({kCpu, "xgboost-json", 1, 30, "model-b", 0, ""}).ok());

  auto first = MergeDatabase(*a, *b);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->records_added, 30);
  EXPECT_EQ(first->workloads_added, 1);
  EXPECT_EQ(first->snapshots_added, 1);
  EXPECT_EQ(a->Stats()->num_records, 60);
  EXPECT_TRUE(a->GetWorkload(MatmulKey(999)).ok());
  auto model = a->LatestCostModelSnapshot(kCpu);
  ASSERT_TRUE(model.ok());
  EXPECT_EQ(model->model, "model-b");
  EXPECT_EQ(model->origin, b->database_id());

  const std::string before = BestRecordsText(*a);
  auto second = MergeDatabase(*a, *b);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->records_added, 0);
  EXPECT_EQ(second->workloads_added, 0);
  EXPECT_EQ(second->snapshots_added, 0);
  EXPECT_EQ(a->Stats()->num_records, 60);
  EXPECT_EQ(BestRecordsText(*a), before);

  // Provenance: the merged records name b, a's own records name a, and the merges are logged.
  RecordFilter filter;
  filter.limit = 100;
  int from_b = 0;
  auto records = a->ListRecords(filter);
  ASSERT_TRUE(records.ok());
  for (const auto& record : *records) {
    if (record.origin() == b->database_id())
      ++from_b;
    else
      EXPECT_EQ(record.origin(), a->database_id());
  }
  EXPECT_EQ(from_b, 30);
  auto stats = a->Stats();
  ASSERT_EQ(stats->merges.size(), 2u);
  EXPECT_EQ(stats->merges[0].source_database_id, b->database_id());
  EXPECT_EQ(stats->merges[0].source_path, b->path());
  EXPECT_EQ(stats->merges[0].records_added, 30);
  EXPECT_EQ(stats->merges[1].records_added, 0);
}

class OnEveryBackend : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    TUNED_SKIP_UNLESS_BACKEND(GetParam());
    log_ = std::make_unique<ScratchLog>(GetParam());
  }
  std::unique_ptr<ScratchLog> log_;
};

INSTANTIATE_TEST_SUITE_P(Backends, OnEveryBackend, ::testing::ValuesIn(testing::AllBackends()),
                         [](const auto& info) { return BackendName(info.param); });

TEST_P(OnEveryBackend, MergeRefusesMergingDatabaseIntoItself) {
  auto a = OpenLogOrFail(log_->location());
  auto again = OpenLogOrFail(log_->location());
  auto merged = MergeDatabase(*a, *again);
  ASSERT_FALSE(merged.ok());
  EXPECT_EQ(merged.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(merged.status().message(), HasSubstr("same database"));
}

}  // namespace
}  // namespace tuned::db

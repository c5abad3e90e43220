// Schema versions and migrations, and the refusal of files the database must not touch:
// each refused file is left byte-for-byte unchanged.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>

#include "tests/unit/tuning_db/db_test_util.h"
#include "tuning_db/database.h"
#include "tuning_db/schema/migrations.h"

namespace tuned::db {
namespace {

using ::testing::HasSubstr;
using testing::kCpu;
using testing::MakeRecord;
using testing::MatmulKey;
using testing::OpenOrFail;
using testing::ReadFile;
using testing::TempDir;
using testing::WriteFile;

// Runs `sql` on a raw connection to `path` (creating it), for building files by hand.
void RawExec(const std::string& path, const std::string& sql) {
  sqlite3* conn = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &conn), SQLITE_OK);
  char* error = nullptr;
  EXPECT_EQ(sqlite3_exec(conn, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK)
      << (error ? error : "");
  sqlite3_free(error);
  sqlite3_close(conn);
}

// Opening `path` fails with `code` and a message containing `text`; the file is unchanged and
// no WAL file appeared.
void ExpectRefusedUnchanged(const std::string& path, StatusCode code, const std::string& text) {
  const std::string before = ReadFile(path);
  auto db = OpenSqliteDatabase(path);
  ASSERT_FALSE(db.ok());
  EXPECT_EQ(db.status().code(), code) << db.status().ToString();
  EXPECT_THAT(db.status().message(), HasSubstr(text));
  EXPECT_THAT(db.status().message(), HasSubstr(path));
  EXPECT_EQ(db.status().message().find('\n'), std::string::npos);  // One line.
  EXPECT_EQ(ReadFile(path), before);
  EXPECT_FALSE(std::filesystem::exists(path + "-wal"));
}

TEST(Schema, MigrationsAreNumberedInOrder) {
  auto migrations = Migrations();
  ASSERT_EQ(migrations.size(), static_cast<size_t>(kSchemaVersion));
  for (size_t i = 0; i < migrations.size(); ++i) EXPECT_EQ(migrations[i].version, int(i) + 1);
}

TEST(SqliteDatabase, MigratesVersionOneFileKeepingRecords) {
  TempDir dir;
  const std::string path = dir.File("v1.db");
  {
    sqlite3* conn = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &conn), SQLITE_OK);
    ASSERT_TRUE(MigrateSchema(conn, 1).ok());
    sqlite3_close(conn);
  }
  // A record as version 1 stored it (no origin column yet).
  v1::TuningRecord record = MakeRecord(64, kCpu, 1, 0.002);
  std::string sql;
  // Serialized messages as hex blobs.
  auto hex = [](const std::string& bytes) {
    static const char* digits = "0123456789abcdef";
    std::string out;
    for (unsigned char c : bytes) {
      out += digits[c >> 4];
      out += digits[c & 15];
    }
    return out;
  };
  v1::Workload workload = record.workload();
  sql =
      "INSERT INTO workloads(key, key_sha256, op, definition, flops, workload, created_unix_ms) "
      "VALUES('" +
      MatmulKey(64) + "', '', 'matmul', '', 0, x'" + hex(workload.SerializeAsString()) +
      "', 0); INSERT INTO targets(target, kind, device_description) VALUES('" + kCpu +
      "', 1, ''); INSERT INTO records(workload_id, target_id, trace, trace_hash, status, "
      "median_seconds, error, result, config, worker_id, device_model, tuner_version, task_id, "
      "created_unix_ms) VALUES(1, 1, x'" +
      hex(record.trace().SerializeAsString()) + "', 'h', 1, 0.002, '', x'" +
      hex(record.result().SerializeAsString()) +
      "', x'', 'worker-1', 'AMD EPYC 7B13', '0.0.1', 'old-task', 5);";
  RawExec(path, sql);

  auto db = OpenOrFail(path);
  ASSERT_NE(db, nullptr);
  auto stats = db->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->schema_version, kSchemaVersion);
  auto best = db->GetBestRecords({MatmulKey(64), kCpu, "", 1});
  ASSERT_TRUE(best.ok());
  ASSERT_EQ(best->records.size(), 1u);
  EXPECT_EQ(best->records[0].task_id(), "old-task");
  EXPECT_EQ(best->records[0].origin(), db->database_id());  // Migration 2 fills provenance.
  // The version 2 tables work.
  EXPECT_TRUE(*db->SaveCostModelSnapshot({kCpu, "xgboost-json", 1, 1, "m", 0, ""}));
}

TEST(SqliteDatabase, RejectsNewerSchemaVersion) {
  TempDir dir;
  const std::string path = dir.File("newer.db");
  { ASSERT_NE(OpenOrFail(path), nullptr); }
  RawExec(path, "PRAGMA user_version = " + std::to_string(kSchemaVersion + 1));
  ExpectRefusedUnchanged(path, StatusCode::kFailedPrecondition,
                         "has schema version " + std::to_string(kSchemaVersion + 1) +
                             ", newer than this tuned supports (" + std::to_string(kSchemaVersion) + ")");
}

TEST(SqliteDatabase, RejectsGarbageFile) {
  TempDir dir;
  const std::string path = dir.File("garbage.db");
  std::string garbage;
  for (int i = 0; i < 500; ++i) garbage += "this is not a database ";
  WriteFile(path, garbage);
  ExpectRefusedUnchanged(path, StatusCode::kInvalidArgument, "is not a tuned database");
}

TEST(SqliteDatabase, RejectsTruncatedFile) {
  TempDir dir;
  const std::string path = dir.File("truncated.db");
  {
    auto db = OpenOrFail(path);
    std::vector<v1::TuningRecord> batch;
    for (int i = 0; i < 200; ++i) batch.push_back(MakeRecord(64 + i, kCpu, i, 0.001));
    ASSERT_TRUE(db->InsertRecords(batch).ok());
  }
  const std::string full = ReadFile(path);
  ASSERT_GT(full.size(), 8192u);
  WriteFile(path, full.substr(0, full.size() / 2));
  ExpectRefusedUnchanged(path, StatusCode::kDataLoss, "is damaged");
}

TEST(SqliteDatabase, RejectsDamagedSchemaPage) {
  TempDir dir;
  const std::string path = dir.File("damaged.db");
  { ASSERT_NE(OpenOrFail(path), nullptr); }
  std::string bytes = ReadFile(path);
  for (size_t i = 100; i < 4096 && i < bytes.size(); ++i) bytes[i] = static_cast<char>(0xA5);
  WriteFile(path, bytes);
  ExpectRefusedUnchanged(path, StatusCode::kDataLoss, "is damaged");
}

TEST(SqliteDatabase, RejectsSqliteDatabaseOfAnotherApplication) {
  TempDir dir;
  const std::string path = dir.File("other.db");
  RawExec(path, "CREATE TABLE songs(title TEXT); INSERT INTO songs VALUES('x');");
  ExpectRefusedUnchanged(path, StatusCode::kInvalidArgument, "of another application");
}

TEST(SqliteDatabase, EmptyFileBecomesNewDatabase) {
  TempDir dir;
  const std::string path = dir.File("empty.db");
  WriteFile(path, "");
  auto db = OpenOrFail(path);
  ASSERT_NE(db, nullptr);
  EXPECT_EQ(db->Stats()->schema_version, kSchemaVersion);
}

}  // namespace
}  // namespace tuned::db

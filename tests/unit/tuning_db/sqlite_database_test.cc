// What only the SQLite backend has: a file on disk, its write-ahead log. Everything the two
// backends share is in store_test.cc.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/unit/tuning_db/db_test_util.h"
#include "tuning_db/database.h"
#include "tuning_db/trace_hash.h"

namespace tuned::db {
namespace {

using ::testing::HasSubstr;
using testing::kCpu;
using testing::kGpu;
using testing::MakeRecord;
using testing::MatmulKey;
using testing::OpenOrFail;
using testing::TempDir;

class SqliteDatabaseTest : public ::testing::Test {
 protected:
  void SetUp() override { db_ = OpenOrFail(dir_.File("tuned.db")); }
  TempDir dir_;
  std::unique_ptr<Database> db_;
};

TEST_F(SqliteDatabaseTest, CreatesFileWithDatabaseId) {
  EXPECT_TRUE(std::filesystem::exists(dir_.File("tuned.db")));
  EXPECT_EQ(db_->database_id().size(), 32u);
  auto reopened = OpenOrFail(dir_.File("tuned.db"));
  EXPECT_EQ(reopened->database_id(), db_->database_id());
}

TEST_F(SqliteDatabaseTest, MissingFileIsNotFoundWithoutCreate) {
  OpenOptions options;
  options.create_if_missing = false;
  auto db = OpenSqliteDatabase(dir_.File("absent.db"), options);
  ASSERT_FALSE(db.ok());
  EXPECT_EQ(db.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(db.status().message(), HasSubstr("absent.db' does not exist"));
  EXPECT_FALSE(std::filesystem::exists(dir_.File("absent.db")));
}

TEST_F(SqliteDatabaseTest, UsesWriteAheadLogging) {
  ASSERT_TRUE(db_->InsertRecord(MakeRecord(64, kCpu, 1, 0.002)).ok());
  // A WAL database stamps file format versions 2 (bytes 18 and 19 of the header).
  std::string header = testing::ReadFile(dir_.File("tuned.db")).substr(0, 100);
  EXPECT_EQ(header[18], 2);
  EXPECT_EQ(header[19], 2);
  EXPECT_TRUE(std::filesystem::exists(dir_.File("tuned.db-wal")));
}

}  // namespace
}  // namespace tuned::db

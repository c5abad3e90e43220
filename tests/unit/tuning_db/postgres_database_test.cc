// What only the PostgreSQL backend has: URLs (and their passwords kept out of messages),
// connection failures, schemas it shares a server database with, a connection pool used by
// many threads, several clients on one log. The shared behaviour is in store_test.cc.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <thread>

#include "tests/unit/tuning_db/backend_test_util.h"
#include "tests/unit/tuning_db/db_test_util.h"
#include "tuning_db/database.h"
#include "tuning_db/postgres_url.h"

namespace tuned::db {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing::Backend;
using testing::kCpu;
using testing::MakeRecord;
using testing::OpenLogOrFail;
using testing::ScratchLog;

TEST(PostgresUrl, BothSchemesArePostgresAndPathsAreNot) {
  EXPECT_TRUE(IsPostgresUrl("postgresql://tuned@db/log"));
  EXPECT_TRUE(IsPostgresUrl("postgres://db/log"));
  EXPECT_FALSE(IsPostgresUrl("tuned.db"));
  EXPECT_FALSE(IsPostgresUrl("/var/lib/postgresql://x.db"));
  EXPECT_FALSE(IsPostgresUrl("postgresql:/db"));
}

TEST(PostgresUrl, RedactionDropsPasswordsOnly) {
  EXPECT_EQ(RedactPostgresUrl("postgresql://tuned:s3cret@db.example:5433/log?sslmode=require"),
            "postgresql://tuned@db.example:5433/log?sslmode=require");
  EXPECT_EQ(RedactPostgresUrl("postgres://u:p@w@h/d?password=x&host=/run/pg&password=y"),
            "postgres://u@h/d?host=/run/pg");
  EXPECT_EQ(RedactPostgresUrl("postgresql://db/log"), "postgresql://db/log");
  EXPECT_EQ(RedactPostgresUrl("postgresql://"), "postgresql://");
  EXPECT_EQ(RedactPostgresUrl("postgresql://u:p@h"), "postgresql://u@h");
}

// Where the backend is built, a bad URL and an unreachable server are one line naming the URL
// without its password; without libpq the URL is refused as unsupported.
TEST(PostgresOpen, BadUrlIsOneLineWithoutPassword) {
  auto db = OpenDatabase("postgresql://tuned:s3cret@/log?no_such_option=1");
  ASSERT_FALSE(db.ok());
#ifdef TUNED_HAVE_POSTGRESQL
  EXPECT_EQ(db.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(db.status().message(), HasSubstr("bad PostgreSQL URL 'postgresql://tuned@/log"));
  EXPECT_THAT(db.status().message(), HasSubstr("no_such_option"));
#else
  EXPECT_EQ(db.status().code(), StatusCode::kUnimplemented);
  EXPECT_THAT(db.status().message(), HasSubstr("without PostgreSQL support"));
#endif
  EXPECT_THAT(db.status().message(), Not(HasSubstr("s3cret")));
  EXPECT_THAT(db.status().message(), Not(HasSubstr("\n")));
}

TEST(PostgresOpen, UnreachableServerIsOneLineNamingUrl) {
#ifndef TUNED_HAVE_POSTGRESQL
  GTEST_SKIP() << "this build has no PostgreSQL backend (libpq was not found at configure time)";
#endif
  testing::TempDir empty;  // A socket folder with no server in it.
  const std::string url = "postgresql://tuned:s3cret@/log?host=" + empty.File("") + "&port=1";
  auto db = OpenDatabase(url);
  ASSERT_FALSE(db.ok());
  EXPECT_EQ(db.status().code(), StatusCode::kUnavailable);
  EXPECT_THAT(db.status().message(),
              HasSubstr("cannot connect to PostgreSQL database 'postgresql://tuned@/log?host="));
  EXPECT_THAT(db.status().message(), HasSubstr("No such file or directory"));
  EXPECT_THAT(db.status().message(), Not(HasSubstr("s3cret")));
  EXPECT_THAT(db.status().message(), Not(HasSubstr("\n")));
}

class PostgresDatabaseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    TUNED_SKIP_UNLESS_BACKEND(Backend::kPostgres);
    log_ = std::make_unique<ScratchLog>(Backend::kPostgres);
  }
  std::unique_ptr<ScratchLog> log_;
};

TEST_F(PostgresDatabaseTest, PathIsTheUrl) {
  auto db = OpenLogOrFail(log_->location());
  ASSERT_NE(db, nullptr);
  EXPECT_EQ(db->path(), RedactPostgresUrl(log_->location()));
  EXPECT_EQ(db->Stats()->path, db->path());
  EXPECT_GT(db->Stats()->file_bytes, 0);
}

TEST_F(PostgresDatabaseTest, MissingSchemaIsNotFoundWithoutCreate) {
  OpenOptions options;
  options.create_if_missing = false;
  auto db = OpenDatabase(log_->location(), options);
  ASSERT_FALSE(db.ok());
  EXPECT_EQ(db.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(db.status().message(), HasSubstr("no tuned schema"));
  // Nothing was created: a later open with create still starts from an empty schema.
  EXPECT_EQ(OpenLogOrFail(log_->location())->Stats()->num_records, 0);
}

TEST_F(PostgresDatabaseTest, RefusesTablesOfAnotherApplication) {
  testing::RunOnPostgresLog(log_->location(), "CREATE TABLE invoices(id int)");
  auto db = OpenDatabase(log_->location());
  ASSERT_FALSE(db.ok());
  EXPECT_EQ(db.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(db.status().message(), HasSubstr("tables of another application"));
}

TEST_F(PostgresDatabaseTest, RefusesNewerSchemaVersion) {
  ASSERT_NE(OpenLogOrFail(log_->location()), nullptr);
  testing::RunOnPostgresLog(log_->location(),
                            "UPDATE meta SET value = '99' WHERE key = 'schema_version'");
  auto db = OpenDatabase(log_->location());
  ASSERT_FALSE(db.ok());
  EXPECT_EQ(db.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(db.status().message(), HasSubstr("schema version 99, newer than this tuned"));
}

// Threads share one Database (and its pool of 2 connections); two Database objects play two
// processes. Every record is stored once, under one id, whoever inserts it.
TEST_F(PostgresDatabaseTest, ConcurrentWritersStoreEachRecordOnce) {
  OpenOptions options;
  options.pool_size = 2;
  auto first = OpenLogOrFail(log_->location(), options);
  auto second = OpenLogOrFail(log_->location(), options);
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  constexpr int kThreads = 6;
  constexpr int kRecords = 30;
  std::vector<std::vector<int64_t>> ids(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      Database& db = t % 2 == 0 ? *first : *second;
      for (int i = 0; i < kRecords; ++i) {  // Every thread inserts the same records.
        auto id = db.InsertRecord(MakeRecord(64, kCpu, i, 0.001 * (i + 1)));
        ids[t].push_back(id.ok() ? *id : -1);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 1; t < kThreads; ++t) EXPECT_EQ(ids[t], ids[0]) << "thread " << t;
  EXPECT_EQ(std::set<int64_t>(ids[0].begin(), ids[0].end()).size(), size_t{kRecords});
  EXPECT_EQ(first->Stats()->num_records, kRecords);
  EXPECT_EQ(second->GetBestRecords({testing::MatmulKey(64), kCpu, "", 1})->records.size(), 1u);
}

}  // namespace
}  // namespace tuned::db

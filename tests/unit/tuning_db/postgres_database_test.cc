// What only the PostgreSQL backend has: URLs (and their passwords kept out of messages),
// connection failures, schemas it shares a server database with, a connection pool used by
// many threads, several clients on one log. The shared behaviour is in store_test.cc.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <set>
#include <thread>

#ifdef TUNED_HAVE_POSTGRESQL
#include <libpq-fe.h>
#endif

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
using testing::kGpu;
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


// Two Database objects play two servers. A task is owned by one at a time; released, or when
// its owner's session ends, the other may take it.
TEST_F(PostgresDatabaseTest, TaskOwnershipIsExclusiveAndEndsWithTheSession) {
  auto first = OpenLogOrFail(log_->location());
  auto second = OpenLogOrFail(log_->location());
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  TaskOwnership* mine = first->task_ownership();
  TaskOwnership* theirs = second->task_ownership();
  ASSERT_NE(mine, nullptr);
  ASSERT_NE(theirs, nullptr);
  EXPECT_TRUE(*mine->TryOwn("task-a"));
  EXPECT_TRUE(*mine->TryOwn("task-a"));  // Still ours.
  EXPECT_FALSE(*theirs->TryOwn("task-a"));
  EXPECT_TRUE(*theirs->TryOwn("task-b"));
  EXPECT_FALSE(*mine->TryOwn("task-b"));
  EXPECT_TRUE(mine->CheckOwned()->empty());

  ASSERT_TRUE(mine->Release("task-a").ok());
  EXPECT_TRUE(*theirs->TryOwn("task-a"));
  EXPECT_FALSE(*mine->TryOwn("task-a"));
  ASSERT_TRUE(theirs->Release("task-a").ok());
  EXPECT_TRUE(*mine->TryOwn("task-a"));

  // The same task ids in another log (schema) are other tasks.
  auto elsewhere = OpenLogOrFail(log_->Another());
  ASSERT_NE(elsewhere, nullptr);
  EXPECT_TRUE(*elsewhere->task_ownership()->TryOwn("task-a"));

  // The server ends both ownership sessions of this log (as when a server's connection drops):
  // each learns what it lost, and what it owned is free.
  testing::RunOnPostgresLog(log_->location(),
                            "SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity WHERE "
                            "application_name = 'tuned tasks ' || "
                            "(SELECT value FROM meta WHERE key = 'database_id')");
  auto mine_lost = mine->CheckOwned();
  auto theirs_lost = theirs->CheckOwned();
  ASSERT_TRUE(mine_lost.ok()) << mine_lost.status().ToString();
  ASSERT_TRUE(theirs_lost.ok()) << theirs_lost.status().ToString();
  EXPECT_EQ(*mine_lost, std::vector<std::string>{"task-a"});
  EXPECT_EQ(*theirs_lost, std::vector<std::string>{"task-b"});
  EXPECT_TRUE(*theirs->TryOwn("task-a"));  // A new session.
  EXPECT_FALSE(*mine->TryOwn("task-a"));
  EXPECT_TRUE(*mine->TryOwn("task-b"));

  // A closed Database lets its tasks go (as soon as the server has ended its session).
  first.reset();
  bool taken = false;
  for (int i = 0; i < 200 && !taken; ++i) {
    taken = *theirs->TryOwn("task-b");
    if (!taken) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(taken);
}

#ifdef TUNED_HAVE_POSTGRESQL
// Runs one statement on a raw connection; an error fails the test.
void Exec(PGconn* conn, const std::string& sql) {
  PGresult* result = PQexec(conn, sql.c_str());
  EXPECT_TRUE(PQresultStatus(result) == PGRES_COMMAND_OK ||
              PQresultStatus(result) == PGRES_TUPLES_OK)
      << sql << ": " << PQresultErrorMessage(result);
  PQclear(result);
}

// Another client locks the two targets of a batch in the opposite order: PostgreSQL breaks the
// deadlock by aborting the batch's transaction (the insert's session detects it first), and
// InsertRecords runs it again instead of failing.
TEST_F(PostgresDatabaseTest, InsertRecordsRunsAgainAfterADeadlock) {
  auto db = OpenLogOrFail(log_->location());
  ASSERT_NE(db, nullptr);
  ASSERT_TRUE(db->InsertRecord(MakeRecord(64, kCpu, 0, 0.001)).ok());
  ASSERT_TRUE(db->InsertRecord(MakeRecord(64, kGpu, 1, 0.001)).ok());
  PGconn* other = PQconnectdb(log_->location().c_str());
  ASSERT_EQ(PQstatus(other), CONNECTION_OK) << PQerrorMessage(other);
  Exec(other, "SET deadlock_timeout = '60s'");
  Exec(other, "BEGIN");
  Exec(other, std::string("UPDATE targets SET kind = kind WHERE target = '") + kGpu + "'");

  StatusOr<InsertResult> inserted = InternalError("not run");
  std::thread insert([&] {
    const v1::TuningRecord batch[] = {MakeRecord(64, kCpu, 2, 0.002),
                                      MakeRecord(64, kGpu, 3, 0.002)};
    inserted = db->InsertRecords(batch);
  });
  // Wait until the batch holds the first target and waits for the second. (Inside a
  // transaction the activity view is a snapshot until cleared.) The cycle must close within
  // the batch session's deadlock_timeout (1 s): it checks once, that long after it began to wait.
  bool waiting = false;
  for (int i = 0; i < 1000 && !waiting; ++i) {
    PGresult* result = PQexec(other,
                              "SELECT pg_stat_clear_snapshot(); "
                              "SELECT COUNT(*) FROM pg_stat_activity WHERE wait_event_type = "
                              "'Lock' AND query LIKE 'INSERT INTO targets%'");
    waiting = PQresultStatus(result) == PGRES_TUPLES_OK && std::string(PQgetvalue(result, 0, 0)) != "0";
    PQclear(result);
    if (!waiting) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_TRUE(waiting) << "the batch never waited for the second target";
  // Closes the cycle; succeeds only once PostgreSQL has aborted the batch's first attempt.
  Exec(other, std::string("UPDATE targets SET kind = kind WHERE target = '") + kCpu + "'");
  Exec(other, "COMMIT");
  insert.join();
  PQfinish(other);
  ASSERT_TRUE(inserted.ok()) << inserted.status().ToString();
  EXPECT_EQ(inserted->inserted, 2);
  EXPECT_EQ(db->Stats()->num_records, 4);
}
#endif

}  // namespace
}  // namespace tuned::db

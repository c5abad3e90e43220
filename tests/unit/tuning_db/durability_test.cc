// Fault tests of the tuning database across processes: a writer killed with SIGKILL at random
// points loses no acknowledged record, and readers querying while a writer inserts see no error
// and the writer loses no row. On both backends: an SQLite file, and a PostgreSQL schema where
// the test server runs (there a killed client must not lose what the server acknowledged).

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <random>
#include <set>
#include <vector>

#include "tests/unit/tuning_db/backend_test_util.h"
#include "tests/unit/tuning_db/db_test_util.h"
#include "tuning_db/trace_hash.h"

namespace tuned::db {
namespace {

using testing::kCpu;
using testing::MakeRecord;
using testing::MatmulKey;
using testing::Backend;
using testing::ScratchLog;

class DatabaseFault : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override { TUNED_SKIP_UNLESS_BACKEND(GetParam()); }
};

INSTANTIATE_TEST_SUITE_P(Backends, DatabaseFault, ::testing::ValuesIn(testing::AllBackends()),
                         [](const auto& info) { return testing::BackendName(info.param); });

// Child: inserts records seq = first, first+1, ... one per transaction, writing each seq to
// `ack_fd` only after InsertRecord returned OK. Never returns.
[[noreturn]] void WriteUntilKilled(const std::string& path, int64_t first, int ack_fd) {
  auto db = OpenDatabase(path);
  if (!db.ok()) _exit(3);
  for (int64_t seq = first;; ++seq) {
    if (!(*db)->InsertRecord(MakeRecord(64, kCpu, seq, 0.001)).ok()) _exit(4);
    if (write(ack_fd, &seq, sizeof(seq)) != sizeof(seq)) _exit(5);
  }
}

TEST_P(DatabaseFault, AcknowledgedRecordsSurviveSigkill) {
  ScratchLog log(GetParam());
  const std::string path = log.location();
  std::mt19937 rng(20261130);  // Fixed seed: the kill points are reproducible.
  std::set<int64_t> acknowledged;
  int64_t next_seq = 0;
  for (int round = 0; round < 8; ++round) {
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      close(fds[0]);
      WriteUntilKilled(path, next_seq, fds[1]);
    }
    close(fds[1]);
    // Kill after a random number of acknowledgements: the child is then somewhere inside a
    // later insert (preparing, inside the transaction, committing, or between records).
    const int kill_after = 1 + static_cast<int>(rng() % 60);
    int64_t seq = 0;
    for (int i = 0; i < kill_after; ++i) {
      ASSERT_EQ(read(fds[0], &seq, sizeof(seq)), static_cast<ssize_t>(sizeof(seq)))
          << "writer died early";
      acknowledged.insert(seq);
    }
    kill(child, SIGKILL);
    // Acknowledgements already in the pipe also count: their inserts had returned.
    while (read(fds[0], &seq, sizeof(seq)) == static_cast<ssize_t>(sizeof(seq))) {
      acknowledged.insert(seq);
    }
    close(fds[0]);
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFSIGNALED(status)) << "writer exited with " << WEXITSTATUS(status);
    next_seq = *acknowledged.rbegin() + 1000;  // Past anything the killed writer may have stored.
  }

  auto db = testing::OpenLogOrFail(path);
  ASSERT_NE(db, nullptr);
  for (int64_t seq : acknowledged) {
    const std::string hash = TraceHash(MakeRecord(64, kCpu, seq, 0.001).trace());
    auto measured = db->HasMeasured(MatmulKey(64), kCpu, hash);
    ASSERT_TRUE(measured.ok()) << measured.status().ToString();
    EXPECT_TRUE(*measured) << "acknowledged record " << seq << " is missing";
  }
  EXPECT_GE(db->Stats()->num_records, static_cast<int64_t>(acknowledged.size()));
}

constexpr int kBatches = 100;
constexpr int kBatchSize = 20;

// Child reader: queries until the writer's last record is visible; exits non-zero on any error
// or if the record count ever goes down.
[[noreturn]] void ReadUntilComplete(const std::string& path, int reader) {
  auto db = OpenDatabase(path);
  if (!db.ok()) _exit(10);
  int64_t last_count = 0;
  std::mt19937 rng(reader);
  while (true) {
    auto stats = (*db)->Stats();
    if (!stats.ok()) _exit(11);
    if (stats->num_records < last_count) _exit(12);
    last_count = stats->num_records;
    auto best = (*db)->GetBestRecords({MatmulKey(64 + static_cast<int>(rng() % 4)), kCpu, "", 5});
    if (!best.ok()) _exit(13);
    auto measured = (*db)->HasMeasured(MatmulKey(64), kCpu, "absent");
    if (!measured.ok() || *measured) _exit(14);
    if (last_count == kBatches * kBatchSize) _exit(0);
  }
}

TEST_P(DatabaseFault, ReadersAndWriterInParallelLoseNothing) {
  ScratchLog log(GetParam());
  const std::string path = log.location();
  { ASSERT_NE(testing::OpenLogOrFail(path), nullptr); }  // Create before the readers start.
  std::vector<pid_t> readers;
  for (int r = 0; r < 3; ++r) {
    pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) ReadUntilComplete(path, r);
    readers.push_back(child);
  }
  pid_t writer = fork();
  ASSERT_GE(writer, 0);
  if (writer == 0) {
    auto db = OpenDatabase(path);
    if (!db.ok()) _exit(20);
    for (int b = 0; b < kBatches; ++b) {
      std::vector<v1::TuningRecord> batch;
      for (int i = 0; i < kBatchSize; ++i) {
        const int64_t seq = b * kBatchSize + i;
        batch.push_back(MakeRecord(64 + static_cast<int>(seq % 4), kCpu, seq, 0.001 + seq * 1e-6));
      }
      auto inserted = (*db)->InsertRecords(batch);
      if (!inserted.ok() || inserted->inserted != kBatchSize) _exit(21);
    }
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(writer, &status, 0), writer);
  const bool writer_ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  EXPECT_TRUE(writer_ok) << "writer status " << status;
  for (pid_t reader : readers) {
    if (!writer_ok) kill(reader, SIGKILL);  // They would wait for rows that never come.
  }
  for (pid_t reader : readers) {
    ASSERT_EQ(waitpid(reader, &status, 0), reader);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << "reader exit code " << WEXITSTATUS(status);
  }
  auto db = testing::OpenLogOrFail(path);
  EXPECT_EQ(db->Stats()->num_records, kBatches * kBatchSize);
}

}  // namespace
}  // namespace tuned::db

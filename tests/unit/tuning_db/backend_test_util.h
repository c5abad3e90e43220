#ifndef TUNED_TESTS_UNIT_TUNING_DB_BACKEND_TEST_UTIL_H_
#define TUNED_TESTS_UNIT_TUNING_DB_BACKEND_TEST_UTIL_H_

// The tuning log's backends for tests that run the same assertions on each: a fresh, empty log
// per test, as an SQLite file in a temporary folder or as a new schema on the PostgreSQL test
// server whose URL the CTest fixture `postgres` puts in TUNED_TEST_POSTGRES_URL.

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "tests/unit/tuning_db/db_test_util.h"
#include "tuning_db/database.h"

namespace tuned::db::testing {

enum class Backend { kSqlite, kPostgres };

inline const std::vector<Backend>& AllBackends() {
  static const std::vector<Backend> kAll = {Backend::kSqlite, Backend::kPostgres};
  return kAll;
}

/// "sqlite" / "postgresql", for test names.
std::string BackendName(Backend backend);

/// gtest prints parameters with this (and ctest shows it in test names) instead of raw bytes.
inline void PrintTo(Backend backend, std::ostream* out) { *out << BackendName(backend); }

/// Why PostgreSQL tests cannot run here (no libpq in this build, no test server URL), or empty
/// when they can.
std::string PostgresUnavailableReason();

/// One empty tuning log. For PostgreSQL a schema of its own on the test server (dropped with
/// everything in it on destruction), so that tests running at once do not see each other.
class ScratchLog {
 public:
  /// Fails the current test (never skips) when the server is configured but unreachable.
  explicit ScratchLog(Backend backend);
  ~ScratchLog();
  ScratchLog(const ScratchLog&) = delete;
  ScratchLog& operator=(const ScratchLog&) = delete;

  /// The argument `OpenDatabase` takes: a file path or a URL.
  const std::string& location() const { return location_; }
  /// Another empty log of the same backend (for merges and imports between two logs).
  std::string Another();

 private:
  std::string NewSchema();

  Backend backend_;
  TempDir dir_;
  std::string location_;
  std::vector<std::string> schemas_;
  int files_ = 0;
};

/// Runs `sql` on the PostgreSQL log at `location` (in its schema), to set up states the API
/// cannot make (a foreign table, a newer schema version); an error fails the test.
void RunOnPostgresLog(const std::string& location, const std::string& sql);

inline std::unique_ptr<Database> OpenLogOrFail(const std::string& location,
                                               OpenOptions options = {}) {
  auto db = OpenDatabase(location, options);
  EXPECT_TRUE(db.ok()) << db.status().ToString();
  if (!db.ok()) return nullptr;
  return std::move(db).value();
}

/// Skips the current test, with the reason, when `backend` cannot run here. Use in SetUp or at
/// the top of a test body.
#define TUNED_SKIP_UNLESS_BACKEND(backend)                                               \
  do {                                                                                    \
    if ((backend) == ::tuned::db::testing::Backend::kPostgres) {                         \
      const std::string tuned_skip_reason = ::tuned::db::testing::PostgresUnavailableReason(); \
      if (!tuned_skip_reason.empty()) GTEST_SKIP() << tuned_skip_reason;                  \
    }                                                                                     \
  } while (0)

}  // namespace tuned::db::testing

#endif  // TUNED_TESTS_UNIT_TUNING_DB_BACKEND_TEST_UTIL_H_

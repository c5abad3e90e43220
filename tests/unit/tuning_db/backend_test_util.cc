#include "tests/unit/tuning_db/backend_test_util.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <random>

#ifdef TUNED_HAVE_POSTGRESQL
#include <libpq-fe.h>
#endif

namespace tuned::db::testing {
namespace {

[[maybe_unused]] std::string ServerUrl() {
  const char* url = std::getenv("TUNED_TEST_POSTGRES_URL");
  return url != nullptr ? url : "";
}

#ifdef TUNED_HAVE_POSTGRESQL
// Runs one statement at `url` as the test server's superuser; an error fails the test.
void RunAt(const std::string& url, const std::string& sql) {
  PGconn* conn = PQconnectdb(url.c_str());
  if (PQstatus(conn) != CONNECTION_OK) {
    ADD_FAILURE() << "cannot reach the PostgreSQL test server " << url << ": "
                  << PQerrorMessage(conn);
    PQfinish(conn);
    return;
  }
  PGresult* result = PQexec(conn, sql.c_str());
  if (PQresultStatus(result) != PGRES_COMMAND_OK && PQresultStatus(result) != PGRES_TUPLES_OK) {
    ADD_FAILURE() << sql << ": " << PQresultErrorMessage(result);
  }
  PQclear(result);
  PQfinish(conn);
}

void RunOnServer(const std::string& sql) { RunAt(ServerUrl(), sql); }
#endif

}  // namespace

std::string BackendName(Backend backend) {
  return backend == Backend::kSqlite ? "sqlite" : "postgresql";
}

std::string PostgresUnavailableReason() {
#ifndef TUNED_HAVE_POSTGRESQL
  return "this build has no PostgreSQL backend (libpq was not found at configure time)";
#else
  if (ServerUrl().empty()) {
    return "TUNED_TEST_POSTGRES_URL is not set: no PostgreSQL test server (run the test through "
           "ctest, whose fixture starts one; it is not registered when the postgresql server "
           "binaries were missing at configure time)";
  }
  return "";
#endif
}

void RunOnPostgresLog(const std::string& location, const std::string& sql) {
#ifdef TUNED_HAVE_POSTGRESQL
  RunAt(location, sql);
#else
  ADD_FAILURE() << "no PostgreSQL in this build to run " << sql;
#endif
}

ScratchLog::ScratchLog(Backend backend) : backend_(backend) {
  location_ = backend_ == Backend::kSqlite ? dir_.File("tuned.db") : NewSchema();
}

ScratchLog::~ScratchLog() {
#ifdef TUNED_HAVE_POSTGRESQL
  for (const std::string& schema : schemas_) RunOnServer("DROP SCHEMA " + schema + " CASCADE");
#endif
}

std::string ScratchLog::Another() {
  if (backend_ == Backend::kSqlite) return dir_.File("other" + std::to_string(++files_) + ".db");
  return NewSchema();
}

std::string ScratchLog::NewSchema() {
#ifdef TUNED_HAVE_POSTGRESQL
  static std::atomic<int> counter{0};
  const std::string schema = "test_" + std::to_string(getpid()) + "_" +
                             std::to_string(std::random_device()() % 100000) + "_" +
                             std::to_string(counter++);
  RunOnServer("CREATE SCHEMA " + schema);
  schemas_.push_back(schema);
  const std::string url = ServerUrl();
  // The tuned tables live in the connection's current schema: the first of search_path.
  return url + (url.find('?') == std::string::npos ? "?" : "&") +
         "options=-csearch_path%3D" + schema;
#else
  return "";
#endif
}

}  // namespace tuned::db::testing

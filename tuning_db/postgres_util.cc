#include "tuning_db/postgres_util.h"

#include <libpq-fe.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <thread>

#include "common/logging.h"

namespace tuned::db {
namespace {

// libpq messages span lines ("connection to server ... failed: ...\n\tIs the server
// running ...?"); a Status is one line.
std::string OneLine(const char* message) {
  std::string line;
  bool space = false;
  for (const char* c = message; c != nullptr && *c != '\0'; ++c) {
    if (*c == '\n' || *c == '\t' || *c == '\r') {
      space = !line.empty();
      continue;
    }
    if (space) line += ' ';
    space = false;
    line += *c;
  }
  return line;
}

// SQLSTATE classes (PostgreSQL manual, appendix A) in the codes tuned callers act on.
StatusCode CodeForSqlState(std::string_view state) {
  if (state.substr(0, 2) == "08" || state.substr(0, 2) == "57" || state.substr(0, 2) == "53" ||
      state == "40001" || state == "40P01" || state == "55P03") {
    return StatusCode::kUnavailable;  // Connection, shutdown, resources, conflicts, lock timeout.
  }
  if (state.substr(0, 2) == "22" || state.substr(0, 2) == "23") {
    return StatusCode::kInvalidArgument;  // Bad data, violated constraints.
  }
  if (state.substr(0, 2) == "28") return StatusCode::kUnauthenticated;
  if (state.substr(0, 2) == "42") return StatusCode::kFailedPrecondition;  // Schema mismatch.
  return StatusCode::kInternal;
}

}  // namespace

PgParams& PgParams::Int(int64_t value) {
  values_.push_back(std::to_string(value));
  nulls_.push_back(false);
  formats_.push_back(0);
  return *this;
}

PgParams& PgParams::Double(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.17g", value);  // Enough digits to round-trip.
  values_.emplace_back(text);
  nulls_.push_back(false);
  formats_.push_back(0);
  return *this;
}

PgParams& PgParams::Text(std::string_view value) {
  values_.emplace_back(value);
  nulls_.push_back(false);
  formats_.push_back(0);
  return *this;
}

PgParams& PgParams::Bytes(std::string_view value) {
  values_.emplace_back(value);
  nulls_.push_back(false);
  formats_.push_back(1);
  return *this;
}

PgParams& PgParams::Null() {
  values_.emplace_back();
  nulls_.push_back(true);
  formats_.push_back(0);
  return *this;
}

std::vector<const char*> PgParams::Values() const {
  std::vector<const char*> values;
  for (size_t i = 0; i < values_.size(); ++i) {
    values.push_back(nulls_[i] ? nullptr : values_[i].c_str());
  }
  return values;
}

std::vector<int> PgParams::Lengths() const {
  std::vector<int> lengths;
  for (const std::string& value : values_) lengths.push_back(static_cast<int>(value.size()));
  return lengths;
}

PgResult::PgResult(PgResult&& other) noexcept : result_(std::exchange(other.result_, nullptr)) {}

PgResult& PgResult::operator=(PgResult&& other) noexcept {
  if (this != &other) {
    if (result_ != nullptr) PQclear(result_);
    result_ = std::exchange(other.result_, nullptr);
  }
  return *this;
}

PgResult::~PgResult() {
  if (result_ != nullptr) PQclear(result_);
}

int PgResult::rows() const { return PQntuples(result_); }

int64_t PgResult::affected() const {
  const char* count = PQcmdTuples(result_);
  return count[0] == '\0' ? 0 : std::strtoll(count, nullptr, 10);
}

int64_t PgResult::Int(int row, int column) const {
  return std::strtoll(PQgetvalue(result_, row, column), nullptr, 10);
}

double PgResult::Double(int row, int column) const {
  return std::strtod(PQgetvalue(result_, row, column), nullptr);
}

std::string PgResult::Text(int row, int column) const {
  return std::string(PQgetvalue(result_, row, column),
                     static_cast<size_t>(PQgetlength(result_, row, column)));
}

std::string PgResult::Bytes(int row, int column) const {
  size_t size = 0;
  unsigned char* bytes =
      PQunescapeBytea(reinterpret_cast<const unsigned char*>(PQgetvalue(result_, row, column)),
                      &size);
  if (bytes == nullptr) return {};
  std::string out(reinterpret_cast<const char*>(bytes), size);
  PQfreemem(bytes);
  return out;
}

bool PgResult::IsNull(int row, int column) const {
  return PQgetisnull(result_, row, column) != 0;
}

StatusOr<std::unique_ptr<PgConnection>> PgConnection::Connect(const std::string& url,
                                                               const std::string& shown_url) {
  char* parse_error = nullptr;
  PQconninfoOption* parsed = PQconninfoParse(url.c_str(), &parse_error);
  if (parsed == nullptr) {
    std::string reason = parse_error != nullptr ? OneLine(parse_error) : "out of memory";
    if (parse_error != nullptr) PQfreemem(parse_error);
    return InvalidArgumentError("bad PostgreSQL URL '" + shown_url + "': " + reason);
  }
  PQconninfoFree(parsed);
  pg_conn* conn = PQconnectdb(url.c_str());
  if (conn == nullptr) return ResourceExhaustedError("cannot allocate a PostgreSQL connection");
  if (PQstatus(conn) != CONNECTION_OK) {
    std::string reason = OneLine(PQerrorMessage(conn));
    PQfinish(conn);
    return UnavailableError("cannot connect to PostgreSQL database '" + shown_url + "': " +
                            reason);
  }
  // Notices (e.g. "relation already exists, skipping") are not errors; keep them off stderr.
  PQsetNoticeProcessor(conn, [](void*, const char*) {}, nullptr);
  return std::unique_ptr<PgConnection>(new PgConnection(conn, shown_url));
}

PgConnection::~PgConnection() {
  if (conn_ != nullptr) PQfinish(conn_);
}

Status PgConnection::ResultStatus(pg_result* result, std::string_view context) {
  const ExecStatusType status = result != nullptr ? PQresultStatus(result) : PGRES_FATAL_ERROR;
  if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) return Status::Ok();
  const char* state = result != nullptr ? PQresultErrorField(result, PG_DIAG_SQLSTATE) : nullptr;
  if (state != nullptr && (std::string_view(state) == "40001" || std::string_view(state) == "40P01")) {
    conflict_seen_ = true;
  }
  const char* primary =
      result != nullptr ? PQresultErrorField(result, PG_DIAG_MESSAGE_PRIMARY) : nullptr;
  const std::string reason = OneLine(primary != nullptr ? primary : PQerrorMessage(conn_));
  const StatusCode code = state != nullptr ? CodeForSqlState(state) : StatusCode::kUnavailable;
  return Status(code, "database '" + shown_url_ + "': " + std::string(context) + ": " + reason);
}

Status PgConnection::Exec(const std::string& sql, std::string_view context) {
  pg_result* raw = PQexec(conn_, sql.c_str());
  Status status = ResultStatus(raw, context);
  if (raw != nullptr) PQclear(raw);
  return status;
}

StatusOr<PgResult> PgConnection::Query(const std::string& sql, const PgParams& params) {
  auto it = prepared_.find(sql);
  if (it == prepared_.end()) {
    const std::string name = "s" + std::to_string(prepared_.size());
    pg_result* raw = PQprepare(conn_, name.c_str(), sql.c_str(), 0, nullptr);
    Status status = ResultStatus(raw, "preparing \"" + sql.substr(0, 60) + "\"");
    if (raw != nullptr) PQclear(raw);
    TUNED_RETURN_IF_ERROR(status);
    it = prepared_.emplace(sql, name).first;
  }
  const std::vector<const char*> values = params.Values();
  const std::vector<int> lengths = params.Lengths();
  pg_result* raw = PQexecPrepared(conn_, it->second.c_str(), params.size(), values.data(),
                                  lengths.data(), params.Formats().data(), /*resultFormat=*/0);
  Status status = ResultStatus(raw, "running \"" + sql.substr(0, 60) + "\"");
  PgResult result(raw);
  if (!status.ok()) return status;
  return result;
}

bool PgConnection::broken() const { return PQstatus(conn_) != CONNECTION_OK; }

Status PgConnection::Reset() {
  prepared_.clear();
  PQreset(conn_);
  if (PQstatus(conn_) != CONNECTION_OK) {
    return UnavailableError("cannot reconnect to PostgreSQL database '" + shown_url_ +
                            "': " + OneLine(PQerrorMessage(conn_)));
  }
  return Status::Ok();
}

PgPool::PgPool(std::string url, std::string shown_url, int size, std::string session_sql)
    : url_(std::move(url)),
      shown_url_(std::move(shown_url)),
      size_(size < 1 ? 1 : size),
      session_sql_(std::move(session_sql)) {}

PgPool::Lease::~Lease() {
  if (conn_ != nullptr) pool_->Release(std::move(conn_));
}

StatusOr<PgPool::Lease> PgPool::Acquire() {
  std::unique_lock lock(mutex_);
  released_.wait(lock, [&] { return !idle_.empty() || open_ < size_; });
  if (!idle_.empty()) {
    std::unique_ptr<PgConnection> conn = std::move(idle_.back());
    idle_.pop_back();
    lock.unlock();
    if (conn->broken()) {
      Status reset = conn->Reset();
      if (reset.ok()) reset = conn->Exec(session_sql_, "setting up the session");
      if (!reset.ok()) {
        lock.lock();
        --open_;
        released_.notify_one();
        return reset;
      }
    }
    return Lease(this, std::move(conn));
  }
  ++open_;
  lock.unlock();
  StatusOr<std::unique_ptr<PgConnection>> conn = PgConnection::Connect(url_, shown_url_);
  Status ready = conn.ok() ? (*conn)->Exec(session_sql_, "setting up the session") : conn.status();
  if (!ready.ok()) {
    lock.lock();
    --open_;
    released_.notify_one();
    return ready;
  }
  return Lease(this, std::move(*conn));
}

void PgPool::Release(std::unique_ptr<PgConnection> conn) {
  std::lock_guard lock(mutex_);
  idle_.push_back(std::move(conn));
  released_.notify_one();
}

StatusOr<PgTransaction> PgTransaction::BeginWrite(PgConnection& conn) {
  TUNED_RETURN_IF_ERROR(conn.Exec("BEGIN", "starting a transaction"));
  return PgTransaction(&conn);
}

StatusOr<PgTransaction> PgTransaction::BeginRead(PgConnection& conn) {
  TUNED_RETURN_IF_ERROR(
      conn.Exec("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", "starting a read transaction"));
  return PgTransaction(&conn);
}

PgTransaction::~PgTransaction() {
  if (conn_ != nullptr) (void)conn_->Exec("ROLLBACK", "rolling back");
}

Status PgTransaction::Commit() {
  PgConnection* conn = std::exchange(conn_, nullptr);
  Status status = conn->Exec("COMMIT", "committing");
  if (!status.ok()) (void)conn->Exec("ROLLBACK", "rolling back");
  return status;
}

Status RunWriteTransaction(PgPool& pool, const std::function<Status(PgConnection&)>& body) {
  TUNED_ASSIGN_OR_RETURN(PgPool::Lease conn, pool.Acquire());
  for (int attempt = 1;; ++attempt) {
    conn->ClearConflict();
    Status status = [&]() -> Status {
      TUNED_ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::BeginWrite(*conn));
      TUNED_RETURN_IF_ERROR(body(*conn));
      return txn.Commit();
    }();
    if (status.ok() || !conn->conflict_seen() || attempt == kMaxWriteAttempts) {
      return status;
    }
    // A random pause, growing with the attempts, so that the two sides of a deadlock do not
    // collide again at once.
    thread_local std::mt19937 rng{std::random_device{}()};
    const int pause_ms = std::uniform_int_distribution<int>(1, 10 << attempt)(rng);
    Logger("db")->info("write transaction aborted by a conflict, attempt {} of {}, retrying in {} ms: {}",
                       attempt, kMaxWriteAttempts, pause_ms, status.message());
    std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms));
  }
}

}  // namespace tuned::db

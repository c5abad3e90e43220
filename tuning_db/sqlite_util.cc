#include "tuning_db/sqlite_util.h"

#include <sqlite3.h>

#include <utility>

namespace tuned::db {

Status SqliteStatus(sqlite3* conn, int rc, std::string_view context) {
  std::string message(context);
  message += ": ";
  message += conn != nullptr ? sqlite3_errmsg(conn) : sqlite3_errstr(rc);
  switch (rc & 0xff) {
    case SQLITE_CORRUPT:
      return DataLossError(std::move(message));
    case SQLITE_NOTADB:
      return InvalidArgumentError(std::move(message));
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return UnavailableError(std::move(message));
    case SQLITE_CANTOPEN:
      return NotFoundError(std::move(message));
    default:
      return InternalError(std::move(message));
  }
}

StatusOr<SqliteConnection> SqliteConnection::Open(const std::string& path, int flags) {
  sqlite3* conn = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &conn, flags, nullptr);
  SqliteConnection owned(conn);  // sqlite3_open_v2 may return a handle even on failure.
  if (rc != SQLITE_OK) return SqliteStatus(conn, rc, "cannot open database '" + path + "'");
  sqlite3_extended_result_codes(conn, 1);
  return owned;
}

SqliteConnection::SqliteConnection(SqliteConnection&& other) noexcept
    : conn_(std::exchange(other.conn_, nullptr)) {}

SqliteConnection& SqliteConnection::operator=(SqliteConnection&& other) noexcept {
  if (this != &other) {
    if (conn_ != nullptr) sqlite3_close_v2(conn_);
    conn_ = std::exchange(other.conn_, nullptr);
  }
  return *this;
}

SqliteConnection::~SqliteConnection() {
  if (conn_ != nullptr) sqlite3_close_v2(conn_);
}

Status SqliteConnection::Exec(std::string_view sql, std::string_view context) const {
  std::string text(sql);
  int rc = sqlite3_exec(conn_, text.c_str(), nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) return SqliteStatus(conn_, rc, context);
  return Status::Ok();
}

StatusOr<Statement> Statement::Prepare(sqlite3* conn, std::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v2(conn, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(stmt);
    return SqliteStatus(conn, rc,
                        "cannot prepare statement '" + std::string(sql.substr(0, 60)) + "'");
  }
  return Statement(conn, stmt);
}

Statement::Statement(Statement&& other) noexcept
    : conn_(other.conn_), stmt_(std::exchange(other.stmt_, nullptr)) {}

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    sqlite3_finalize(stmt_);
    conn_ = other.conn_;
    stmt_ = std::exchange(other.stmt_, nullptr);
  }
  return *this;
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

Statement& Statement::BindInt(int index, int64_t value) {
  sqlite3_bind_int64(stmt_, index, value);
  return *this;
}

Statement& Statement::BindDouble(int index, double value) {
  sqlite3_bind_double(stmt_, index, value);
  return *this;
}

Statement& Statement::BindText(int index, std::string_view value) {
  sqlite3_bind_text64(stmt_, index, value.data(), value.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
  return *this;
}

Statement& Statement::BindBlob(int index, std::string_view value) {
  // A zero-length blob must still be a blob, not NULL: bind from a valid pointer.
  static const char kEmpty = 0;
  sqlite3_bind_blob64(stmt_, index, value.empty() ? &kEmpty : value.data(), value.size(),
                      SQLITE_TRANSIENT);
  return *this;
}

Statement& Statement::BindNull(int index) {
  sqlite3_bind_null(stmt_, index);
  return *this;
}

StatusOr<bool> Statement::Step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  std::string sql = sqlite3_sql(stmt_) != nullptr ? sqlite3_sql(stmt_) : "";
  return SqliteStatus(conn_, rc, "statement '" + sql.substr(0, 60) + "' failed");
}

Status Statement::Run() {
  TUNED_ASSIGN_OR_RETURN(bool has_row, Step());
  if (has_row) return InternalError("statement returned a row where none was expected");
  return Status::Ok();
}

void Statement::Reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

int64_t Statement::ColumnInt(int index) const { return sqlite3_column_int64(stmt_, index); }

double Statement::ColumnDouble(int index) const { return sqlite3_column_double(stmt_, index); }

std::string Statement::ColumnText(int index) const {
  const unsigned char* text = sqlite3_column_text(stmt_, index);
  if (text == nullptr) return {};
  return std::string(reinterpret_cast<const char*>(text),
                     static_cast<size_t>(sqlite3_column_bytes(stmt_, index)));
}

std::string Statement::ColumnBlob(int index) const {
  const void* data = sqlite3_column_blob(stmt_, index);
  if (data == nullptr) return {};
  return std::string(static_cast<const char*>(data),
                     static_cast<size_t>(sqlite3_column_bytes(stmt_, index)));
}

bool Statement::ColumnIsNull(int index) const {
  return sqlite3_column_type(stmt_, index) == SQLITE_NULL;
}

static StatusOr<sqlite3*> Begin(sqlite3* conn, const char* sql) {
  int rc = sqlite3_exec(conn, sql, nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) return SqliteStatus(conn, rc, "cannot start a transaction");
  return conn;
}

StatusOr<Transaction> Transaction::BeginWrite(sqlite3* conn) {
  TUNED_ASSIGN_OR_RETURN(sqlite3 * started, Begin(conn, "BEGIN IMMEDIATE"));
  return Transaction(started);
}

StatusOr<Transaction> Transaction::BeginRead(sqlite3* conn) {
  TUNED_ASSIGN_OR_RETURN(sqlite3 * started, Begin(conn, "BEGIN"));
  return Transaction(started);
}

Transaction::Transaction(Transaction&& other) noexcept
    : conn_(std::exchange(other.conn_, nullptr)) {}

Transaction::~Transaction() {
  if (conn_ != nullptr) sqlite3_exec(conn_, "ROLLBACK", nullptr, nullptr, nullptr);
}

Status Transaction::Commit() {
  int rc = sqlite3_exec(conn_, "COMMIT", nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) return SqliteStatus(conn_, rc, "cannot commit");
  conn_ = nullptr;
  return Status::Ok();
}

}  // namespace tuned::db

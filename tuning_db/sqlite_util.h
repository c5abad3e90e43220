#ifndef TUNED_TUNING_DB_SQLITE_UTIL_H_
#define TUNED_TUNING_DB_SQLITE_UTIL_H_

/// \file
/// Thin RAII wrappers over the SQLite C API, private to tuning_db: a connection, a prepared
/// statement, and the one helper that turns a SQLite result code plus `sqlite3_errmsg` into a
/// `tuned::Status` (STYLE 7.5: foreign error channels are converted once, by the owning module).

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "common/status.h"

struct sqlite3;
struct sqlite3_stmt;

namespace tuned::db {

/// A Status for SQLite result code `rc` on `conn`: "<context>: <sqlite message>". Corruption
/// maps to DataLoss, "not a database" to InvalidArgument, busy/locked to Unavailable, the rest
/// to Internal.
Status SqliteStatus(sqlite3* conn, int rc, std::string_view context);

/// An open connection; closes it on destruction.
class SqliteConnection {
 public:
  /// Opens `path` with the given sqlite3_open_v2 flags.
  static StatusOr<SqliteConnection> Open(const std::string& path, int flags);

  SqliteConnection() = default;
  SqliteConnection(SqliteConnection&& other) noexcept;
  SqliteConnection& operator=(SqliteConnection&& other) noexcept;
  SqliteConnection(const SqliteConnection&) = delete;
  SqliteConnection& operator=(const SqliteConnection&) = delete;
  ~SqliteConnection();

  sqlite3* get() const { return conn_; }

  /// Runs one or more statements that return no rows we need.
  Status Exec(std::string_view sql, std::string_view context) const;

 private:
  explicit SqliteConnection(sqlite3* conn) : conn_(conn) {}
  sqlite3* conn_ = nullptr;
};

/// A prepared statement; `Step` returns true while a row is available.
class Statement {
 public:
  static StatusOr<Statement> Prepare(sqlite3* conn, std::string_view sql);

  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&& other) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement();

  /// Binders take 1-based parameter indexes, as SQLite does; text and blobs are copied.
  Statement& BindInt(int index, int64_t value);
  Statement& BindDouble(int index, double value);
  Statement& BindText(int index, std::string_view value);
  Statement& BindBlob(int index, std::string_view value);
  Statement& BindNull(int index);

  /// Advances to the next row: true if there is one, false when done, or an error.
  StatusOr<bool> Step();
  /// Steps a statement that returns no rows; an error otherwise.
  Status Run();
  /// Resets the statement and clears its bindings for reuse.
  void Reset();

  /// Column readers take 0-based indexes.
  int64_t ColumnInt(int index) const;
  double ColumnDouble(int index) const;
  std::string ColumnText(int index) const;
  std::string ColumnBlob(int index) const;
  bool ColumnIsNull(int index) const;

 private:
  Statement(sqlite3* conn, sqlite3_stmt* stmt) : conn_(conn), stmt_(stmt) {}
  sqlite3* conn_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
};

/// A borrowed, reusable prepared statement that is reset when the borrow ends, so that no
/// statement left mid-result keeps an old read snapshot open on the connection.
class CachedStatement {
 public:
  explicit CachedStatement(Statement* stmt) : stmt_(stmt) {}
  CachedStatement(CachedStatement&& other) noexcept : stmt_(std::exchange(other.stmt_, nullptr)) {}
  CachedStatement& operator=(CachedStatement&&) = delete;
  CachedStatement(const CachedStatement&) = delete;
  CachedStatement& operator=(const CachedStatement&) = delete;
  ~CachedStatement() {
    if (stmt_ != nullptr) stmt_->Reset();
  }

  Statement* operator->() const { return stmt_; }
  Statement& operator*() const { return *stmt_; }

 private:
  Statement* stmt_;
};

/// A transaction on a connection; rolled back on destruction unless committed. Writers use
/// `BEGIN IMMEDIATE` so that the write lock is taken up front (an upgrade from a read
/// transaction could fail busy without waiting); readers use a deferred `BEGIN` so that several
/// statements see one snapshot.
class Transaction {
 public:
  static StatusOr<Transaction> BeginWrite(sqlite3* conn);
  static StatusOr<Transaction> BeginRead(sqlite3* conn);

  Transaction(Transaction&& other) noexcept;
  Transaction& operator=(Transaction&&) = delete;
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction();

  Status Commit();

 private:
  explicit Transaction(sqlite3* conn) : conn_(conn) {}
  sqlite3* conn_ = nullptr;  // Null once committed or moved from.
};

}  // namespace tuned::db

#endif  // TUNED_TUNING_DB_SQLITE_UTIL_H_

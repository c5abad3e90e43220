#ifndef TUNED_TUNING_DB_POSTGRES_UTIL_H_
#define TUNED_TUNING_DB_POSTGRES_UTIL_H_

/// \file
/// Thin RAII wrappers over libpq, private to tuning_db: a connection that prepares each
/// statement text once, a query result, bound parameters, a small connection pool and a
/// transaction. libpq errors become `tuned::Status` here and nowhere else (STYLE 7.5).

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

struct pg_conn;
struct pg_result;

namespace tuned::db {

/// Parameters of one statement, `$1` first. Text goes as text; bytes go in binary format, so a
/// serialized message is never escaped.
class PgParams {
 public:
  PgParams& Int(int64_t value);
  PgParams& Double(double value);
  PgParams& Text(std::string_view value);
  PgParams& Bytes(std::string_view value);
  PgParams& Null();

  int size() const { return static_cast<int>(values_.size()); }
  std::vector<const char*> Values() const;
  std::vector<int> Lengths() const;
  const std::vector<int>& Formats() const { return formats_; }

 private:
  std::vector<std::string> values_;
  std::vector<bool> nulls_;
  std::vector<int> formats_;
};

/// The rows of one statement, in text format.
class PgResult {
 public:
  explicit PgResult(pg_result* result) : result_(result) {}
  PgResult(PgResult&& other) noexcept;
  PgResult& operator=(PgResult&& other) noexcept;
  PgResult(const PgResult&) = delete;
  PgResult& operator=(const PgResult&) = delete;
  ~PgResult();

  int rows() const;
  /// Rows changed by an INSERT/UPDATE/DELETE.
  int64_t affected() const;
  int64_t Int(int row, int column) const;
  double Double(int row, int column) const;
  std::string Text(int row, int column) const;
  /// A bytea column, decoded.
  std::string Bytes(int row, int column) const;
  bool IsNull(int row, int column) const;

 private:
  pg_result* result_ = nullptr;
};

/// One server connection. `Query` prepares each distinct statement text once per connection
/// and executes the prepared statement afterwards.
class PgConnection {
 public:
  /// Connects to `url`; errors name `shown_url` (the URL without its password).
  static StatusOr<std::unique_ptr<PgConnection>> Connect(const std::string& url,
                                                         const std::string& shown_url);
  PgConnection(const PgConnection&) = delete;
  PgConnection& operator=(const PgConnection&) = delete;
  ~PgConnection();

  /// Runs statements without parameters or rows we need (BEGIN, SET, DDL).
  Status Exec(const std::string& sql, std::string_view context);
  StatusOr<PgResult> Query(const std::string& sql, const PgParams& params = {});

  /// Whether a statement since the last ClearConflict() was aborted by PostgreSQL to break a
  /// deadlock or a serialization conflict (SQLSTATE 40P01, 40001): running its transaction
  /// again may succeed.
  bool conflict_seen() const { return conflict_seen_; }
  void ClearConflict() { conflict_seen_ = false; }

  /// Whether the server connection was lost; the pool reconnects such a connection.
  bool broken() const;
  /// Reconnects a broken connection; its prepared statements are gone with the old one.
  Status Reset();

 private:
  PgConnection(pg_conn* conn, std::string shown_url) : conn_(conn), shown_url_(std::move(shown_url)) {}
  Status ResultStatus(pg_result* result, std::string_view context);

  pg_conn* conn_ = nullptr;
  bool conflict_seen_ = false;
  const std::string shown_url_;
  std::map<std::string, std::string, std::less<>> prepared_;  // SQL text -> statement name.
};

/// At most `size` connections to one URL, opened when first needed and reused.
class PgPool {
 public:
  /// `session_sql` runs on every new connection (session settings such as the lock timeout).
  PgPool(std::string url, std::string shown_url, int size, std::string session_sql);

  /// A connection borrowed from the pool; returned to it when the lease ends.
  class Lease {
   public:
    Lease(PgPool* pool, std::unique_ptr<PgConnection> conn) : pool_(pool), conn_(std::move(conn)) {}
    Lease(Lease&& other) noexcept = default;
    Lease& operator=(Lease&&) = delete;
    ~Lease();
    PgConnection* operator->() const { return conn_.get(); }
    PgConnection& operator*() const { return *conn_; }

   private:
    PgPool* pool_;
    std::unique_ptr<PgConnection> conn_;
  };

  /// Waits for a free connection (opening one while fewer than `size` exist) and reconnects
  /// one the server dropped.
  StatusOr<Lease> Acquire();

 private:
  void Release(std::unique_ptr<PgConnection> conn);

  const std::string url_;
  const std::string shown_url_;
  const int size_;
  const std::string session_sql_;
  std::mutex mutex_;
  std::condition_variable released_;
  std::vector<std::unique_ptr<PgConnection>> idle_;
  int open_ = 0;
};

/// A transaction on a connection; rolled back on destruction unless committed. Reads use
/// REPEATABLE READ so that several statements see one snapshot.
class PgTransaction {
 public:
  static StatusOr<PgTransaction> BeginWrite(PgConnection& conn);
  static StatusOr<PgTransaction> BeginRead(PgConnection& conn);

  PgTransaction(PgTransaction&& other) noexcept : conn_(std::exchange(other.conn_, nullptr)) {}
  PgTransaction& operator=(PgTransaction&&) = delete;
  PgTransaction(const PgTransaction&) = delete;
  PgTransaction& operator=(const PgTransaction&) = delete;
  ~PgTransaction();

  Status Commit();

 private:
  explicit PgTransaction(PgConnection* conn) : conn_(conn) {}
  PgConnection* conn_ = nullptr;  // Null once committed or moved from.
};

/// How often a write transaction runs before a deadlock or serialization failure is final.
inline constexpr int kMaxWriteAttempts = 5;

/// Runs `body` in a write transaction on a connection of `pool` and commits it. A transaction
/// PostgreSQL aborted to break a deadlock or a serialization conflict is run again (up to
/// kMaxWriteAttempts times, after a short random pause), so concurrent writers that lock rows
/// in different orders both succeed. `body` may run more than once: it must reset what it
/// reports back and touch nothing outside the database.
Status RunWriteTransaction(PgPool& pool, const std::function<Status(PgConnection&)>& body);

}  // namespace tuned::db

#endif  // TUNED_TUNING_DB_POSTGRES_UTIL_H_

#ifndef TUNED_TUNING_DB_SCHEMA_MIGRATIONS_H_
#define TUNED_TUNING_DB_SCHEMA_MIGRATIONS_H_

/// \file
/// The schema of a tuning database as an ordered list of numbered migrations. The version a
/// file is at lives in `PRAGMA user_version`; `PRAGMA application_id` marks the file as ours.
/// Adding a schema change (STYLE 7.10): append a migration with the next number to
/// `migrations.cc`, bump `kSchemaVersion`, and add a test that opens a file at the previous
/// version and one at a newer version.

#include <span>

#include "common/status.h"

struct sqlite3;

namespace tuned::db {

/// The schema version this build writes and reads.
inline constexpr int kSchemaVersion = 4;

/// `PRAGMA application_id` of every tuning database: "tund" in ASCII.
inline constexpr int kApplicationId = 0x74756e64;

struct Migration {
  int version;              // The schema version the file is at after this migration.
  const char* description;  // One line, for logs.
  const char* sql;          // Statements run inside the migration's transaction.
};

/// Every migration, in order; migration i takes the file from version i to version i + 1.
std::span<const Migration> Migrations();

/// Brings the database on `conn` from its current `user_version` to `target_version` inside one
/// `BEGIN IMMEDIATE` transaction (so concurrent openers migrate once), stamping the application
/// id. Refuses a file already past `target_version`. Private to tuning_db and its tests.
Status MigrateSchema(sqlite3* conn, int target_version);

}  // namespace tuned::db

#endif  // TUNED_TUNING_DB_SCHEMA_MIGRATIONS_H_

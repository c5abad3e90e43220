#ifndef TUNED_TUNING_DB_SCHEMA_POSTGRES_MIGRATIONS_H_
#define TUNED_TUNING_DB_SCHEMA_POSTGRES_MIGRATIONS_H_

/// \file
/// The schema of a PostgreSQL tuning database: the same tables and versions as the SQLite
/// schema (migrations.h) in PostgreSQL's dialect, numbered the same way. The version lives in
/// the `meta` row `schema_version`, the row `application` = `tuned` marks the schema as ours.
/// A schema change appends a migration here and in migrations.cc, with the same number.

#include <span>

#include "common/status.h"
#include "tuning_db/schema/migrations.h"

namespace tuned::db {

class PgConnection;

/// The schema version this build writes and reads on PostgreSQL.
inline constexpr int kPostgresSchemaVersion = 4;
static_assert(kPostgresSchemaVersion == kSchemaVersion, "both backends hold the same schema");

/// Every PostgreSQL migration, in order.
std::span<const Migration> PostgresMigrations();

/// Takes the schema from `from_version` to `to_version` and records the new version. The caller
/// holds the transaction and the advisory lock that makes concurrent openers migrate once.
Status ApplyPostgresMigrations(PgConnection& conn, int from_version, int to_version);

}  // namespace tuned::db

#endif  // TUNED_TUNING_DB_SCHEMA_POSTGRES_MIGRATIONS_H_

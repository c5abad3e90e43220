#ifndef TUNED_TUNING_DB_POSTGRES_URL_H_
#define TUNED_TUNING_DB_POSTGRES_URL_H_

/// \file
/// How a database argument names a PostgreSQL server, and how it is shown to people. No libpq
/// here: `OpenDatabase` needs these even in a build without the PostgreSQL backend.

#include <string>
#include <string_view>

namespace tuned::db {

/// True for `postgresql://...` and `postgres://...` (the libpq connection URIs); anything else
/// is an SQLite file path.
bool IsPostgresUrl(std::string_view text);

/// The URL without its password (`user:secret@` becomes `user@`, a `password=` query parameter
/// is dropped), for error messages, logs and `Database::path()`.
std::string RedactPostgresUrl(std::string_view url);

}  // namespace tuned::db

#endif  // TUNED_TUNING_DB_POSTGRES_URL_H_

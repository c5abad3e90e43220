// The one place that maps a database argument to a backend.

#include "tuning_db/database.h"
#include "tuning_db/postgres_url.h"

#ifdef TUNED_HAVE_POSTGRESQL
#include "tuning_db/postgres_database_internal.h"
#endif

namespace tuned::db {

StatusOr<std::unique_ptr<Database>> OpenDatabase(const std::string& location,
                                                 const OpenOptions& options) {
  if (!IsPostgresUrl(location)) return OpenSqliteDatabase(location, options);
#ifdef TUNED_HAVE_POSTGRESQL
  return OpenPostgresDatabase(location, options);
#else
  return UnimplementedError("database '" + RedactPostgresUrl(location) +
                            "': this tuned was built without PostgreSQL support (libpq was not "
                            "found when it was configured)");
#endif
}

}  // namespace tuned::db

#ifndef TUNED_TUNING_DB_MERGE_H_
#define TUNED_TUNING_DB_MERGE_H_

/// \file
/// Merging another tuning database (e.g. one from another cluster) into this one.

#include "common/status.h"
#include "tuning_db/database.h"

namespace tuned::db {

/// Copies every workload, record and cost-model snapshot of `source` into `into`, keeping
/// their provenance (`origin`, worker, device, tuner version, timestamps), and appends an
/// entry to `into`'s merge log. Idempotent: records are deduplicated by the import rule
/// (workload, target, trace hash, worker, creation time) and snapshots by (target, origin,
/// time), so merging the same file again adds nothing. Tasks are the state of the server that
/// ran them and are not merged; the records keep their task ids. Merging a database into
/// itself is a FailedPrecondition error.
StatusOr<MergeEntry> MergeDatabase(Database& into, Database& source);

}  // namespace tuned::db

#endif  // TUNED_TUNING_DB_MERGE_H_

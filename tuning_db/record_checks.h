#ifndef TUNED_TUNING_DB_RECORD_CHECKS_H_
#define TUNED_TUNING_DB_RECORD_CHECKS_H_

/// \file
/// What every backend refuses to store, in one place: private to tuning_db.

#include <cstddef>

#include "common/status.h"
#include "tuned/v1/record.pb.h"

namespace tuned::db {

/// InvalidArgument if the key is empty or `key_sha256` is set and is not its SHA-256.
Status CheckWorkload(const v1::Workload& workload);
/// InvalidArgument, naming "record <index>", for a record no backend stores: a bad workload, no
/// trace or target, a trace hash that does not match, an unspecified status, an OK result
/// without a positive finite median.
Status CheckRecord(const v1::TuningRecord& record, size_t index);

}  // namespace tuned::db

#endif  // TUNED_TUNING_DB_RECORD_CHECKS_H_

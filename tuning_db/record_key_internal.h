#ifndef TUNED_TUNING_DB_RECORD_KEY_INTERNAL_H_
#define TUNED_TUNING_DB_RECORD_KEY_INTERNAL_H_

/// \file
/// The SQL of a record's key and of ranking, the same on both backends (only the parameter
/// marks differ: `?N` on SQLite, `$N` on PostgreSQL), and the miss reason of a key that matched
/// no record. Private to tuning_db.

#include <cstdint>
#include <string>
#include <vector>

#include "tuning_db/record_store.h"

namespace tuned::db {

/// Conditions on the records aliased `alias` that match `MeasurementKey` (record_store.h),
/// reading its four fields from parameters first..first+3 (device model, toolkit, code
/// generation, protocol; bind them in that order, "" and 0 matching anything). `mark` is '?' or
/// '$'. Starts with " AND ".
std::string KeyConditionsSql(const std::string& alias, int first, char mark);

/// Ranking conditions on the OK records aliased `r` of the pair (parameters 1 and 2: workload
/// and target ids; the key's from `key_first`, as KeyConditionsSql): per trace, only records of
/// its latest kind; where a FINAL record of the key exists, only FINAL records. The records
/// they compare with are of the same key (and verified unless `allow_unverified`).
std::string RankingConditionsSql(int key_first, char mark, bool allow_unverified);

/// OK records of the pair that a key excluded, counted per key.
struct KeyCount {
  std::string device_model;
  std::string toolkit_version;
  int64_t codegen_version = 0;
  int64_t protocol_version = 0;
  int64_t count = 0;
};

/// The miss reason when OK records of the pair exist but none of `query`'s key: what was asked
/// and which keys exist, e.g. "no ok records of workload 'w' for target 't' on device 'A';
/// ok records exist on: 'B' (3)".
std::string KeyMissReason(const BestRecordsQuery& query, const std::string& workload,
                          const std::vector<KeyCount>& existing);

}  // namespace tuned::db

#endif  // TUNED_TUNING_DB_RECORD_KEY_INTERNAL_H_

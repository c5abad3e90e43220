#ifndef TUNED_TUNING_DB_SNAPSHOT_STORE_H_
#define TUNED_TUNING_DB_SNAPSHOT_STORE_H_

/// \file
/// Cost-model snapshots per target, so that a later search (or another server merged into this
/// log) starts from a trained model. Implemented by the SQLite database (database.h).

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace tuned::db {

/// A trained cost model for one target, as the cost model serialized it.
struct CostModelSnapshot {
  std::string target;
  std::string format;            // e.g. "xgboost-json"; opaque to the database.
  uint32_t feature_version = 0;  // Feature schema version the model was trained on.
  int64_t num_records = 0;       // Records it was trained on.
  std::string model;             // The serialized model.
  int64_t created_unix_ms = 0;   // 0 on save means "now".
  std::string origin;            // Database id it was first saved in; empty on save means here.
};

inline constexpr int kKeptSnapshotsPerTarget = 4;

class SnapshotStore {
 public:
  virtual ~SnapshotStore() = default;

  /// Stores a cost-model snapshot and keeps only the newest `kKeptSnapshotsPerTarget` per
  /// target. Returns false if nothing was added: a snapshot with the same target, origin and time
  /// already exists, or this one is older than the kept ones.
  virtual StatusOr<bool> SaveCostModelSnapshot(const CostModelSnapshot& snapshot) = 0;
  /// The newest snapshot for `target`; NotFound when there is none.
  virtual StatusOr<CostModelSnapshot> LatestCostModelSnapshot(const std::string& target) = 0;
  /// Every stored snapshot, oldest first.
  virtual StatusOr<std::vector<CostModelSnapshot>> ListCostModelSnapshots() = 0;
};

}  // namespace tuned::db

#endif  // TUNED_TUNING_DB_SNAPSHOT_STORE_H_

#ifndef TUNED_COSTMODEL_MODEL_SNAPSHOT_H_
#define TUNED_COSTMODEL_MODEL_SNAPSHOT_H_

/// \file
/// Cost-model snapshots in the tuning database, one series per target: a search saves its model
/// after training, and a new task on the same target starts from the newest snapshot (transfer).
/// The database keeps the blob opaque; format and feature version are checked here on load.

#include <string>

#include "common/status.h"
#include "costmodel/model/cost_model.h"
#include "tuning_db/snapshot_store.h"

namespace tuned::costmodel {

/// Serializes `model` and stores it as the newest snapshot for `target` (num_records = the
/// model's sample count). Returns false when the database kept an equal or newer snapshot.
StatusOr<bool> SaveSnapshot(db::SnapshotStore& db, const std::string& target, const CostModel& model);

/// Loads the newest snapshot for `target` into `model`. NotFound when the target has none;
/// FailedPrecondition when it was written in another format or for another feature version
/// (the model is left unchanged then); the model's own Deserialize errors otherwise.
Status LoadLatestSnapshot(db::SnapshotStore& db, const std::string& target, CostModel& model);

}  // namespace tuned::costmodel

#endif  // TUNED_COSTMODEL_MODEL_SNAPSHOT_H_

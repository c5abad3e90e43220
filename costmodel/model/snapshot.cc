#include "costmodel/model/snapshot.h"

#include "costmodel/features/features.h"

namespace tuned::costmodel {

StatusOr<bool> SaveSnapshot(db::SnapshotStore& db, const std::string& target, const CostModel& model) {
  if (target.empty()) return InvalidArgumentError("cost model snapshot: target is empty");
  TUNED_ASSIGN_OR_RETURN(std::string blob, model.Serialize());
  db::CostModelSnapshot snapshot;
  snapshot.target = target;
  snapshot.format = model.format();
  snapshot.feature_version = kFeatureVersion;
  snapshot.num_records = model.num_samples();
  snapshot.model = std::move(blob);
  return db.SaveCostModelSnapshot(snapshot);
}

Status LoadLatestSnapshot(db::SnapshotStore& db, const std::string& target, CostModel& model) {
  StatusOr<db::CostModelSnapshot> snapshot = db.LatestCostModelSnapshot(target);
  if (!snapshot.ok()) {
    return snapshot.status().WithContext("cost model snapshot for target '" + target + "'");
  }
  if (snapshot->format != model.format()) {
    return FailedPreconditionError("cost model snapshot for target '" + target + "' has format '" +
                                   snapshot->format + "', the model reads '" + model.format() +
                                   "'");
  }
  if (snapshot->feature_version != kFeatureVersion) {
    return FailedPreconditionError("cost model snapshot for target '" + target +
                                   "' was trained on feature version " +
                                   std::to_string(snapshot->feature_version) +
                                   ", this build extracts version " +
                                   std::to_string(kFeatureVersion));
  }
  Status status = model.Deserialize(snapshot->model);
  if (!status.ok()) return status.WithContext("cost model snapshot for target '" + target + "'");
  return Status::Ok();
}

}  // namespace tuned::costmodel

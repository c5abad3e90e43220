#include "tuning_db/merge.h"

#include <string>
#include <vector>

namespace tuned::db {

StatusOr<MergeEntry> MergeDatabase(Database& into, Database& source) {
  if (into.database_id() == source.database_id()) {
    return FailedPreconditionError("cannot merge database '" + source.path() + "' into '" +
                                   into.path() + "': they are the same database");
  }
  MergeEntry entry;
  entry.source_path = source.path();
  entry.source_database_id = source.database_id();

  // Workloads first, so that those without records come along too.
  TUNED_ASSIGN_OR_RETURN(DatabaseStats before, into.Stats());
  TUNED_ASSIGN_OR_RETURN(std::vector<WorkloadSummary> workloads, source.ListWorkloads());
  for (const WorkloadSummary& summary : workloads) {
    TUNED_RETURN_IF_ERROR(into.PutWorkload(summary.workload));
  }

  InsertOptions options;
  options.stamp_missing_time = false;
  RecordFilter filter;
  filter.limit = 1000;
  while (true) {
    TUNED_ASSIGN_OR_RETURN(std::vector<v1::TuningRecord> page, source.ListRecords(filter));
    if (page.empty()) break;
    filter.after_id = page.back().record_id();
    for (v1::TuningRecord& record : page) {
      // The source may predate provenance stamping; then the record was measured there.
      if (record.origin().empty()) record.set_origin(source.database_id());
      record.set_record_id(0);
    }
    TUNED_ASSIGN_OR_RETURN(InsertResult result, into.InsertRecords(page, options));
    entry.records_added += result.inserted;
  }

  TUNED_ASSIGN_OR_RETURN(std::vector<CostModelSnapshot> snapshots, source.ListCostModelSnapshots());
  for (CostModelSnapshot& snapshot : snapshots) {
    if (snapshot.origin.empty()) snapshot.origin = source.database_id();
    TUNED_ASSIGN_OR_RETURN(bool added, into.SaveCostModelSnapshot(snapshot));
    if (added) ++entry.snapshots_added;
  }

  TUNED_ASSIGN_OR_RETURN(DatabaseStats after, into.Stats());
  entry.workloads_added = after.num_workloads - before.num_workloads;
  TUNED_RETURN_IF_ERROR(into.LogMerge(entry));
  return entry;
}

}  // namespace tuned::db

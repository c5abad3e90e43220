#ifndef TUNED_SERVER_TASKS_WORKER_LOSSES_H_
#define TUNED_SERVER_TASKS_WORKER_LOSSES_H_

/// \file
/// Quarantine of candidates that kill their workers: every lease the dispatcher revokes
/// because its worker went away is counted per (workload, target, trace) in the tuning log,
/// and a job starts with the losses its trace already had. With the dispatcher's
/// `max_attempts` (2) a trace whose worker died under it twice completes as WORKER_LOST and is
/// recorded, so no task proposes it again (the search skips stored traces) — also after a
/// server restart, which forgets the dispatcher's own count, and in another task.

#include "server/dispatch/dispatcher.h"
#include "tuning_db/record_store.h"

namespace tuned::tasks {

/// Sets `options.on_lease_lost` and `options.prior_losses` to count in `records` (which must
/// outlive the dispatcher). A failing write or read is logged and counts nothing.
void CountWorkerLossesIn(db::RecordStore& records, dispatch::DispatcherOptions& options);

}  // namespace tuned::tasks

#endif  // TUNED_SERVER_TASKS_WORKER_LOSSES_H_

#ifndef TUNED_SERVER_TASKS_CALIBRATIONS_H_
#define TUNED_SERVER_TASKS_CALIBRATIONS_H_

/// \file
/// Drift detection's two ends on the server: every calibration figure a worker reports is
/// stored in the tuning log (`worker_calibrations`), and the batch of a worker whose
/// calibration drifted goes to the task manager, whose tasks re-measure the jobs of theirs
/// in it (RECORD_KIND_REMEASURE records).

#include <atomic>
#include <memory>

#include "server/dispatch/dispatcher.h"
#include "tuning_db/record_store.h"

namespace tuned::tasks {

class TaskManager;

/// Sets `options.on_calibration` to store in `records` (which must outlive the dispatcher) and
/// `options.on_drift` to hand the batch to `*sink` when it is set (the task manager is made
/// after the dispatcher; the composition root sets and clears it). Failures are logged.
void HandleCalibrationsIn(db::RecordStore& records,
                          std::shared_ptr<std::atomic<TaskManager*>> sink,
                          dispatch::DispatcherOptions& options);

}  // namespace tuned::tasks

#endif  // TUNED_SERVER_TASKS_CALIBRATIONS_H_

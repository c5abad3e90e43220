#include "server/tasks/calibrations.h"

#include "common/logging.h"
#include "common/time.h"
#include "server/tasks/task_manager.h"

namespace tuned::tasks {

void HandleCalibrationsIn(db::RecordStore& records,
                          std::shared_ptr<std::atomic<TaskManager*>> sink,
                          dispatch::DispatcherOptions& options) {
  options.on_calibration = [&records](const dispatch::CalibrationEvent& event) {
    db::WorkerCalibration row;
    row.worker_id = event.worker_id;
    row.device_model = event.device_model;
    row.median_seconds = event.median_seconds;
    row.repeat_cv = event.repeat_cv;
    row.drift = event.drift;
    row.drifted = event.drifted;
    row.created_unix_ms = UnixMs();
    Status stored = records.InsertCalibration(row);
    if (!stored.ok()) {
      Logger("tasks")->error("storing a calibration of worker {}: {}", event.worker_id,
                             stored.message());
    }
  };
  options.on_drift = [sink](const dispatch::CalibrationEvent& event,
                            const std::vector<dispatch::CompletedJob>& batch) {
    TaskManager* manager = sink->load();
    if (manager == nullptr) return;
    manager->RemeasureDrifted(event.worker_id, batch);
  };
}

}  // namespace tuned::tasks

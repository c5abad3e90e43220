#include "server/tasks/worker_losses.h"

#include "common/logging.h"
#include "tuning_db/trace_hash.h"

namespace tuned::tasks {

void CountWorkerLossesIn(db::RecordStore& records, dispatch::DispatcherOptions& options) {
  options.on_lease_lost = [&records](const v1::MeasureJob& job, const std::string& why) {
    StatusOr<int> losses = records.CountWorkerLoss(job.workload().key(), job.target().target(),
                                                   db::TraceHash(job.trace()), why);
    if (!losses.ok()) {
      Logger("tasks")->error("counting a worker loss of job {}: {}", job.job_id(),
                             losses.status().message());
      return;
    }
    Logger("tasks")->warn("worker lost under trace job={} task={} losses={} reason='{}'",
                          job.job_id(), job.task_id(), *losses, why);
  };
  options.prior_losses = [&records](const v1::MeasureJob& job) {
    StatusOr<int> losses = records.WorkerLosses(job.workload().key(), job.target().target(),
                                                db::TraceHash(job.trace()));
    if (!losses.ok()) {
      Logger("tasks")->error("reading the worker losses of job {}: {}", job.job_id(),
                             losses.status().message());
      return 0;
    }
    return *losses;
  };
}

}  // namespace tuned::tasks

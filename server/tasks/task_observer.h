#ifndef TUNED_SERVER_TASKS_TASK_OBSERVER_H_
#define TUNED_SERVER_TASKS_TASK_OBSERVER_H_

/// \file
/// What a running task reports about its own work, for metrics (observability/server): the
/// tasks call these from their threads and know nothing of who listens. An implementation must
/// be thread-safe, must not block and must not call back into the task manager.

#include "tuned/v1/measure.pb.h"
#include "tuned/v1/task.pb.h"

namespace tuned::tasks {

class TaskObserver {
 public:
  virtual ~TaskObserver() = default;
  /// The search proposed `candidates` candidates in `seconds` (one NextBatch call).
  virtual void OnBatchProposed(const v1::TaskSpec& spec, int candidates, double seconds) = 0;
  /// A result was stored as a record; `write_seconds` is how long the database insert took.
  virtual void OnResultStored(const v1::TaskSpec& spec, const v1::MeasureResult& result,
                              double write_seconds) = 0;
};

}  // namespace tuned::tasks

#endif  // TUNED_SERVER_TASKS_TASK_OBSERVER_H_

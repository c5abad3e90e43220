#ifndef TUNED_PROTO_TASK_STATE_H_
#define TUNED_PROTO_TASK_STATE_H_

/// \file
/// What the states of `TaskState` (tuned/v1/task.proto) mean beyond their names, for the
/// server, its clients and the tests alike.

#include "tuned/v1/task.pb.h"

namespace tuned::v1 {

/// A final task never changes again: it succeeded, failed or was cancelled.
inline bool IsFinal(TaskState state) {
  return state == TASK_STATE_SUCCEEDED || state == TASK_STATE_FAILED ||
         state == TASK_STATE_CANCELLED;
}

}  // namespace tuned::v1

#endif  // TUNED_PROTO_TASK_STATE_H_

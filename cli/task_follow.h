#ifndef TUNED_CLI_TASK_FOLLOW_H_
#define TUNED_CLI_TASK_FOLLOW_H_

/// \file
/// Submitting a tuning task and following it to its end, for `tuned tune` (one workload, or
/// every task of a model): survives a server restart for `wait_s`.

#include "cli/tune_progress.h"
#include "common/status.h"
#include "rpc/channel.h"
#include "tuned/v1/task.pb.h"

namespace tuned::cli {

StatusOr<v1::TaskStatus> SubmitAndFollow(rpc::Connection connection, const v1::TaskSpec& spec, int wait_s,
                                         ProgressMode progress_mode);

}  // namespace tuned::cli

#endif  // TUNED_CLI_TASK_FOLLOW_H_

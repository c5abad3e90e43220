#ifndef TUNED_CLI_TASKS_COMMAND_H_
#define TUNED_CLI_TASKS_COMMAND_H_

/// \file
/// `tuned tasks --model model.onnx`: the model's tuning tasks (fused kernels with the same
/// workload key made one task, weighted by how often the model runs it), their FLOPs and share
/// of the model's, and the nodes no kernel computes.

#include "cli/cli_support.h"

namespace tuned::cli {

void RegisterTasksCommand(Program& program);

}  // namespace tuned::cli

#endif  // TUNED_CLI_TASKS_COMMAND_H_

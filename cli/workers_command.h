#ifndef TUNED_CLI_WORKERS_COMMAND_H_
#define TUNED_CLI_WORKERS_COMMAND_H_

/// \file
/// `tuned workers --server ADDR`: the workers connected to a server and their state.

#include "cli/cli_support.h"

namespace tuned::cli {

void RegisterWorkersCommand(Program& program);

}  // namespace tuned::cli

#endif  // TUNED_CLI_WORKERS_COMMAND_H_

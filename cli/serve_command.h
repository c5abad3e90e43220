#ifndef TUNED_CLI_SERVE_COMMAND_H_
#define TUNED_CLI_SERVE_COMMAND_H_

/// \file
/// `tuned serve`: the tuning server's flags and output; the server itself is
/// server/stack/server_stack.h.

#include "cli/cli_support.h"

namespace tuned::cli {

void RegisterServeCommand(Program& program);

}  // namespace tuned::cli

#endif  // TUNED_CLI_SERVE_COMMAND_H_

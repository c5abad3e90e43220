#ifndef TUNED_CLI_COMMANDS_H_
#define TUNED_CLI_COMMANDS_H_

/// \file
/// Registration of the `tuned` sub-commands; each lives in its own <name>_command.cc.

#include "cli/cli_support.h"

namespace tuned::cli {

/// Adds every sub-command of `tuned` to `program`.
void RegisterCommands(Program& program);

}  // namespace tuned::cli

#endif  // TUNED_CLI_COMMANDS_H_

#ifndef TUNED_CLI_LOWER_COMMAND_H_
#define TUNED_CLI_LOWER_COMMAND_H_

#include "cli/cli_support.h"

namespace tuned::cli {

/// `tuned lower --workload SPEC [--trace FILE | --default-schedule] [--json]`: prints a
/// workload's key and the loop program of a trace, of the default schedule, or (neither given)
/// the unscheduled program.
void RegisterLowerCommand(Program& program);

}  // namespace tuned::cli

#endif  // TUNED_CLI_LOWER_COMMAND_H_

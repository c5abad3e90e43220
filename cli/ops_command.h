#ifndef TUNED_CLI_OPS_COMMAND_H_
#define TUNED_CLI_OPS_COMMAND_H_

#include "cli/cli_support.h"

namespace tuned::cli {

/// `tuned ops [--json]`: the built-in ops a workload spec may name, each with its parameters
/// (kind, default or "required", choices).
void RegisterOpsCommand(Program& program);

}  // namespace tuned::cli

#endif  // TUNED_CLI_OPS_COMMAND_H_

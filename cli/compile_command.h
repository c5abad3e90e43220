#ifndef TUNED_CLI_COMPILE_COMMAND_H_
#define TUNED_CLI_COMPILE_COMMAND_H_

#include "cli/cli_support.h"

namespace tuned::cli {

/// `tuned compile --workload SPEC [--target T] --db PATH -o OUT.{o,so}`: builds the best
/// recorded schedule (or the default one, with a warning) and writes OUT plus OUT.h.
void RegisterCompileCommand(Program& program);

}  // namespace tuned::cli

#endif  // TUNED_CLI_COMPILE_COMMAND_H_

#ifndef TUNED_CLI_MEASURE_COMMAND_H_
#define TUNED_CLI_MEASURE_COMMAND_H_

#include "cli/cli_support.h"

namespace tuned::cli {

/// `tuned measure --workload SPEC [--trace FILE] [--json] [--target T] [protocol flags]`:
/// builds, verifies and times one candidate (a trace, or the unscheduled program) on this machine
/// with the measurement worker's engine and prints the result. Exit 0 when the result is OK,
/// 1 when the candidate failed (the result is still printed), 2 for a bad spec, trace file or
/// flag.
void RegisterMeasureCommand(Program& program);

}  // namespace tuned::cli

#endif  // TUNED_CLI_MEASURE_COMMAND_H_

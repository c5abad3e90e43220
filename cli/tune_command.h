#ifndef TUNED_CLI_TUNE_COMMAND_H_
#define TUNED_CLI_TUNE_COMMAND_H_

/// \file
/// `tuned tune`: submits a tuning task to a server (--server) and follows it to the end, or
/// runs the same server, one local worker and the database embedded in this process.

#include "cli/cli_support.h"

namespace tuned::cli {

void RegisterTuneCommand(Program& program);

}  // namespace tuned::cli

#endif  // TUNED_CLI_TUNE_COMMAND_H_

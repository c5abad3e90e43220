#ifndef TUNED_CLI_DB_COMMAND_H_
#define TUNED_CLI_DB_COMMAND_H_

/// \file
/// `tuned db list | show KEY | best SPEC | export | import FILE | merge OTHER.db | stats`: the
/// tuning database from the command line. Every sub-command takes `--db PATH` (default
/// `$TUNED_DB`, then `./tuned.db`) and `--json`. Read commands refuse a missing database file
/// instead of creating an empty one; `import` and `merge` create it.

#include "cli/cli_support.h"

namespace tuned::cli {

void RegisterDbCommand(Program& program);

}  // namespace tuned::cli

#endif  // TUNED_CLI_DB_COMMAND_H_

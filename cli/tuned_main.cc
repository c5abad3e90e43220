// The `tuned` command: one sub-command per file, registered here in the order --help lists them.

#include "cli/cli_support.h"
#include "cli/commands.h"

int main(int argc, char** argv) {
  tuned::cli::Program program("tuned", "tuned: auto-tuning for tensor programs");
  tuned::cli::RegisterCommands(program);
  return program.Run(argc, argv);
}

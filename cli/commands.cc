#include "cli/commands.h"

#include "cli/lower_command.h"

namespace tuned::cli {

void RegisterCommands(Program& program) {
  RegisterLowerCommand(program);
}

}  // namespace tuned::cli

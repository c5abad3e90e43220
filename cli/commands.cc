#include "cli/commands.h"

#include "cli/db_command.h"
#include "cli/lower_command.h"

namespace tuned::cli {

void RegisterCommands(Program& program) {
  RegisterLowerCommand(program);
  RegisterDbCommand(program);
}

}  // namespace tuned::cli

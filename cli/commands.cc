#include "cli/commands.h"

#include "cli/compile_command.h"
#include "cli/db_command.h"
#include "cli/lower_command.h"

namespace tuned::cli {

void RegisterCommands(Program& program) {
  RegisterLowerCommand(program);
  RegisterDbCommand(program);
  RegisterCompileCommand(program);
}

}  // namespace tuned::cli

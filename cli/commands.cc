#include "cli/commands.h"

#include "cli/compile_command.h"
#include "cli/db_command.h"
#include "cli/lower_command.h"
#include "cli/measure_command.h"
#include "cli/ops_command.h"
#include "cli/run_model_command.h"
#include "cli/serve_command.h"
#include "cli/tasks_command.h"
#include "cli/tune_command.h"
#include "cli/workers_command.h"

namespace tuned::cli {

void RegisterCommands(Program& program) {
  RegisterOpsCommand(program);
  RegisterLowerCommand(program);
  RegisterDbCommand(program);
  RegisterMeasureCommand(program);
  RegisterCompileCommand(program);
  RegisterTasksCommand(program);
  RegisterRunModelCommand(program);
  RegisterTuneCommand(program);
  RegisterServeCommand(program);
  RegisterWorkersCommand(program);
}

}  // namespace tuned::cli

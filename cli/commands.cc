#include "cli/commands.h"

namespace tuned::cli {

void RegisterCommands(Program& program) {
  (void)program;
}

}  // namespace tuned::cli

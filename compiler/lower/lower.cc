#include "compiler/lower/lower.h"

#include "compiler/ir/simplify.h"
#include "compiler/lower/lower_internal.h"

namespace tuned::lower {

StatusOr<LoweredFunc> Lower(const schedule::ScheduleState& state, const std::string& name) {
  LoweringContext ctx(state);
  TUNED_RETURN_IF_ERROR(InferBounds(ctx));
  TUNED_ASSIGN_OR_RETURN(ir::Stmt body, GenerateLoopNests(ctx));
  LoweredFunc func;
  func.name = name;
  func.args = state.workload->arguments();
  func.body = ir::Simplify(body);
  return func;
}

}  // namespace tuned::lower

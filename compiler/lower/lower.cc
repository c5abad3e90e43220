#include "compiler/lower/lower.h"

#include "compiler/ir/simplify.h"
#include "compiler/lower/loop_partition.h"
#include "compiler/lower/loop_unswitch.h"
#include "compiler/lower/lower_internal.h"

namespace tuned::lower {

StatusOr<LoweredFunc> Lower(const schedule::ScheduleState& state, const std::string& name,
                            const LowerOptions& options) {
  LoweringContext ctx(state);
  TUNED_RETURN_IF_ERROR(InferBounds(ctx));
  ChooseBufferLayouts(ctx);
  TUNED_ASSIGN_OR_RETURN(ir::Stmt body, GenerateLoopNests(ctx));
  LoweredFunc func;
  func.name = name;
  func.args = state.workload->arguments();
  func.body = ir::Simplify(body);
  if (options.hoist_guards) {
    // Folded again after each step: the pieces and paths decide guards the whole loop did not.
    func.body = ir::Simplify(PartitionLoops(func.body));
    func.body = ir::Simplify(UnswitchGuards(func.body));
  }
  return func;
}

}  // namespace tuned::lower

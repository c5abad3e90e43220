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
  TUNED_ASSIGN_OR_RETURN(LoopNests nests, GenerateLoopNests(ctx, options.prepack_constants));
  LoweredFunc func;
  func.name = name;
  func.args = state.workload->inputs();
  func.args.insert(func.args.end(), nests.packed.begin(), nests.packed.end());
  func.args.push_back(state.workload->output_stage().output);
  func.num_packed = nests.packed.size();
  auto finish = [&](const ir::Stmt& nest) {
    ir::Stmt s = ir::Simplify(nest);
    if (!options.hoist_guards) return s;
    // Folded again after each step: the pieces and paths decide guards the whole loop did not.
    s = ir::Simplify(PartitionLoops(s));
    return ir::Simplify(UnswitchGuards(s));
  };
  func.body = finish(nests.body);
  if (nests.prepack.defined()) func.prepack = finish(nests.prepack);
  return func;
}

}  // namespace tuned::lower

#ifndef TUNED_COMPILER_IR_TDL_ELABORATE_H_
#define TUNED_COMPILER_IR_TDL_ELABORATE_H_

/// \file
/// The checker: a syntax tree to a workload. Resolves names (parameters, tensors, axes),
/// evaluates shapes, types every expression and builds the stages through WorkloadBuilder, so a
/// definition becomes exactly the workload the same stages built in C++ would be. Every rule it
/// enforces fails with one line naming the source position and the offending token.

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "compiler/ir/op_library.h"
#include "compiler/ir/tdl/ast.h"

namespace tuned::ir::tdl {

struct ElaborateOptions {
  /// Values given outside the text (`--param M=512`): they override the text's defaults, and
  /// each must name a declared parameter.
  std::vector<std::pair<std::string, std::string>> params;
  SpecLimits limits;
  /// The workload's key from its finished definition.
  std::function<std::string(const Workload&)> key;
};

StatusOr<Workload> Elaborate(const AstProgram& program, const Source& source,
                             const ElaborateOptions& options);

}  // namespace tuned::ir::tdl

#endif  // TUNED_COMPILER_IR_TDL_ELABORATE_H_

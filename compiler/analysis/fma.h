#ifndef TUNED_COMPILER_ANALYSIS_FMA_H_
#define TUNED_COMPILER_ANALYSIS_FMA_H_

/// \file
/// Which float multiply/add pairs become one fused multiply-add: the LLVM code generator emits
/// exactly these as llvm.fmuladd, and the cost model counts exactly these as float_fma.

#include <optional>

#include "compiler/ir/ir.h"

namespace tuned::analysis {

/// A float add or subtract with a multiply operand, read as
/// (negate_product ? -mul.a : mul.a) * mul.b + (negate_addend ? -addend : addend).
struct FmaContraction {
  const ir::Binary* mul;
  const ir::Expr* addend;
  bool negate_product;
  bool negate_addend;
};

/// The contraction of `op`, if it is a float add/sub with a multiply on either side (the left
/// multiply wins when both are); nullopt otherwise. The multiply is not a separate operation.
std::optional<FmaContraction> MatchFma(const ir::Binary& op);

}  // namespace tuned::analysis

#endif  // TUNED_COMPILER_ANALYSIS_FMA_H_

#ifndef TUNED_COMPILER_CODEGEN_LLVM_VECTOR_MATH_INTERNAL_H_
#define TUNED_COMPILER_CODEGEN_LLVM_VECTOR_MATH_INTERNAL_H_

/// \file
/// Private to compiler/codegen/llvm: float32 math functions emitted inline, lane by lane in a
/// vector's registers. LLVM's exp intrinsic on a vector becomes one libm call per lane (expf has
/// no vector form without a vector math library), which made every softmax, sigmoid and SiLU
/// compute-bound on calls; these take a few vector instructions per vector instead.

#include <llvm/IR/IRBuilder.h>

namespace tuned::codegen::internal {

/// e^x of a float32 scalar or vector, within 2 ulp of expf for normal results. Like expf: +inf
/// above ln(FLT_MAX), 0 below ln(FLT_MIN) (no subnormal results), NaN for NaN.
llvm::Value* EmitExpF32(llvm::IRBuilder<>& b, llvm::Value* x);

}  // namespace tuned::codegen::internal

#endif  // TUNED_COMPILER_CODEGEN_LLVM_VECTOR_MATH_INTERNAL_H_

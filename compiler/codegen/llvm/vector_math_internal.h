#ifndef TUNED_COMPILER_CODEGEN_LLVM_VECTOR_MATH_INTERNAL_H_
#define TUNED_COMPILER_CODEGEN_LLVM_VECTOR_MATH_INTERNAL_H_

/// \file
/// Private to compiler/codegen/llvm: float32 math functions emitted inline, lane by lane in a
/// vector's registers. LLVM's exp intrinsic on a vector becomes one libm call per lane (expf has
/// no vector form without a vector math library), and tanh and erf had only libm, which made
/// every softmax, sigmoid, SiLU and GELU compute-bound on calls; these take a few dozen vector
/// instructions per vector instead.

#include <llvm/IR/IRBuilder.h>

namespace tuned::codegen::internal {

/// e^x of a float32 scalar or vector, within 2 ulp of expf for normal results. Like expf: +inf
/// above ln(FLT_MAX), NaN for NaN; 0 below ln(FLT_MIN) (no subnormal results) except for
/// 16-lane vectors with `avx512` (x86 with AVX-512F), whose scalef gives expf's subnormals.
llvm::Value* EmitExpF32(llvm::IRBuilder<>& b, llvm::Value* x, bool avx512);
/// tanh(x) of a float32 scalar or vector, within 4 ulp of tanhf; NaN for NaN.
llvm::Value* EmitTanhF32(llvm::IRBuilder<>& b, llvm::Value* x);
/// erf(x) of a float32 scalar or vector, within 4 ulp of erff (and 1e-7 of it); NaN for NaN.
llvm::Value* EmitErfF32(llvm::IRBuilder<>& b, llvm::Value* x);

}  // namespace tuned::codegen::internal

#endif  // TUNED_COMPILER_CODEGEN_LLVM_VECTOR_MATH_INTERNAL_H_

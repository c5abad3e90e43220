// e^x as Cody and Waite's range reduction and a minimax polynomial: x = n ln2 + r with
// |r| <= ln2 / 2, e^r from a degree-7 polynomial (coefficients as in Moshier's Cephes expf,
// published figures), 2^n put into the float's exponent field.

#include "compiler/codegen/llvm/vector_math_internal.h"

#include <limits>

#include <llvm/IR/Intrinsics.h>

namespace tuned::codegen::internal {
namespace {

llvm::Value* Splat(llvm::IRBuilder<>& b, llvm::Type* type, double value) {
  return llvm::ConstantFP::get(type, value);
}

}  // namespace

llvm::Value* EmitExpF32(llvm::IRBuilder<>& b, llvm::Value* x) {
  llvm::Type* type = x->getType();
  llvm::Type* int_type = b.getInt32Ty();
  if (auto* vector = llvm::dyn_cast<llvm::VectorType>(type)) {
    int_type = llvm::VectorType::get(int_type, vector->getElementCount());
  }
  const double kMaxLog = 88.72283905206835;   // ln(FLT_MAX)
  const double kMinLog = -87.33654475055310;  // ln(FLT_MIN)
  llvm::Value* clamped = b.CreateBinaryIntrinsic(
      llvm::Intrinsic::minnum, b.CreateBinaryIntrinsic(llvm::Intrinsic::maxnum, x, Splat(b, type, kMinLog)),
      Splat(b, type, kMaxLog));
  auto fma = [&](llvm::Value* m1, llvm::Value* m2, llvm::Value* addend) {
    return b.CreateIntrinsic(llvm::Intrinsic::fmuladd, {type}, {m1, m2, addend});
  };
  // n = round(x / ln2); r = x - n ln2, ln2 in two parts so that n * ln2_hi is exact.
  llvm::Value* n = b.CreateUnaryIntrinsic(llvm::Intrinsic::rint,
                                          b.CreateFMul(clamped, Splat(b, type, 1.44269504088896341)));
  llvm::Value* r = fma(n, Splat(b, type, -0.693359375), clamped);
  r = fma(n, Splat(b, type, 2.12194440e-4), r);
  const double kCoefficients[] = {1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3,
                                  4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1};
  llvm::Value* p = Splat(b, type, kCoefficients[0]);
  for (size_t i = 1; i < std::size(kCoefficients); ++i) p = fma(p, r, Splat(b, type, kCoefficients[i]));
  llvm::Value* y = b.CreateFAdd(fma(b.CreateFMul(r, r), p, r), Splat(b, type, 1.0));
  // 2^n as 2^(n/2) * 2^(n - n/2): n runs from -126 to 128 on the clamped range, and each half
  // stays within the exponents of normal floats.
  llvm::Value* whole = b.CreateFPToSI(n, int_type);
  llvm::Value* half = b.CreateAShr(whole, llvm::ConstantInt::get(int_type, 1));
  auto power_of_two = [&](llvm::Value* exponent) {
    llvm::Value* biased = b.CreateAdd(exponent, llvm::ConstantInt::get(int_type, 127));
    return b.CreateBitCast(b.CreateShl(biased, llvm::ConstantInt::get(int_type, 23)), type);
  };
  llvm::Value* result = b.CreateFMul(b.CreateFMul(y, power_of_two(half)), power_of_two(b.CreateSub(whole, half)));
  result = b.CreateSelect(b.CreateFCmpOGT(x, Splat(b, type, kMaxLog)),
                          Splat(b, type, std::numeric_limits<double>::infinity()), result);
  result = b.CreateSelect(b.CreateFCmpOLT(x, Splat(b, type, kMinLog)), Splat(b, type, 0.0), result);
  return b.CreateSelect(b.CreateFCmpUNO(x, x), x, result);
}

}  // namespace tuned::codegen::internal

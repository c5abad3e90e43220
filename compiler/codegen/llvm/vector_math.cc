// float32 exp, tanh and erf emitted inline. exp: Cody and Waite's range reduction, x = n ln2 + r
// with |r| <= ln2 / 2, e^r from a degree-7 polynomial (coefficients as in Moshier's Cephes expf,
// published figures), 2^n put into the float's exponent field. tanh and erf: their Taylor series
// near 0 (where the forms below cancel), elsewhere through exp: tanh from e^(2|x|), erf as 1 -
// erfc with Press et al.'s Chebyshev fit of erfc (Numerical Recipes' erfcc, relative error
// below 1.2e-7).

#include "compiler/codegen/llvm/vector_math_internal.h"

#include <cmath>
#include <limits>
#include <vector>

#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsX86.h>

namespace tuned::codegen::internal {
namespace {

llvm::Value* Splat(llvm::IRBuilder<>& b, llvm::Type* type, double value) {
  return llvm::ConstantFP::get(type, value);
}

llvm::Value* Fma(llvm::IRBuilder<>& b, llvm::Value* m1, llvm::Value* m2, llvm::Value* addend) {
  return b.CreateIntrinsic(llvm::Intrinsic::fmuladd, {m1->getType()}, {m1, m2, addend});
}

// c[0] + c[1] v + c[2] v^2 + ... by Horner's rule.
llvm::Value* Polynomial(llvm::IRBuilder<>& b, llvm::Value* v, const std::vector<double>& c) {
  llvm::Value* p = Splat(b, v->getType(), c.back());
  for (size_t i = c.size() - 1; i-- > 0;) p = Fma(b, p, v, Splat(b, v->getType(), c[i]));
  return p;
}

// x P(x^2) for |x| below `near_zero`, else `far` (computed for every lane; selected per lane).
llvm::Value* OddSeriesNearZero(llvm::IRBuilder<>& b, llvm::Value* x, const std::vector<double>& series,
                               double near_zero, llvm::Value* far) {
  llvm::Value* near = b.CreateFMul(x, Polynomial(b, b.CreateFMul(x, x), series));
  llvm::Value* abs = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
  return b.CreateSelect(b.CreateFCmpOLT(abs, Splat(b, x->getType(), near_zero)), near, far);
}

// x = n ln2 + r with |r| <= ln2 / 2 (ln2 in two parts so that n * ln2_hi is exact): n, integral
// as a float, and e^r from the polynomial.
struct ReducedExp {
  llvm::Value* n;
  llvm::Value* exp_r;
};
ReducedExp ReduceExp(llvm::IRBuilder<>& b, llvm::Value* x) {
  llvm::Type* type = x->getType();
  llvm::Value* n =
      b.CreateUnaryIntrinsic(llvm::Intrinsic::rint, b.CreateFMul(x, Splat(b, type, 1.44269504088896341)));
  llvm::Value* r = Fma(b, n, Splat(b, type, -0.693359375), x);
  r = Fma(b, n, Splat(b, type, 2.12194440e-4), r);
  llvm::Value* p = Polynomial(b, r, {5.0000001201e-1, 1.6666665459e-1, 4.1665795894e-2, 8.3334519073e-3,
                                     1.3981999507e-3, 1.9875691500e-4});
  return {n, b.CreateFAdd(Fma(b, b.CreateFMul(r, r), p, r), Splat(b, type, 1.0))};
}

// e^x of a 16-lane vector with AVX-512's scalef: e^r 2^n in one instruction that also gives
// +inf, subnormals and 0 where the exponent leaves the normal range, so the clamp only keeps
// n finite (and NaN passes through it), and no select repairs the ends.
llvm::Value* EmitExpF32Scalef(llvm::IRBuilder<>& b, llvm::Value* x) {
  llvm::Type* type = x->getType();
  // Past these bounds e^x is +inf or rounds to 0 whatever n is.
  llvm::Value* lo = Splat(b, type, -104.0), *hi = Splat(b, type, 89.0);
  llvm::Value* clamped = b.CreateSelect(b.CreateFCmpOLT(x, lo), lo, x);
  clamped = b.CreateSelect(b.CreateFCmpOGT(clamped, hi), hi, clamped);
  auto [n, exp_r] = ReduceExp(b, clamped);
  return b.CreateIntrinsic(llvm::Intrinsic::x86_avx512_mask_scalef_ps_512, {},
                           {exp_r, n, exp_r, b.getInt16(0xffff), b.getInt32(4 /* current rounding */)});
}

}  // namespace

llvm::Value* EmitExpF32(llvm::IRBuilder<>& b, llvm::Value* x, bool avx512) {
  llvm::Type* type = x->getType();
  auto* vector = llvm::dyn_cast<llvm::FixedVectorType>(type);
  if (avx512 && vector && vector->getNumElements() == 16) return EmitExpF32Scalef(b, x);
  llvm::Type* int_type = b.getInt32Ty();
  if (vector) int_type = llvm::FixedVectorType::get(int_type, vector->getNumElements());
  const double kMaxLog = 88.72283905206835;   // ln(FLT_MAX)
  const double kMinLog = -87.33654475055310;  // ln(FLT_MIN)
  llvm::Value* clamped = b.CreateBinaryIntrinsic(
      llvm::Intrinsic::minnum, b.CreateBinaryIntrinsic(llvm::Intrinsic::maxnum, x, Splat(b, type, kMinLog)),
      Splat(b, type, kMaxLog));
  auto [n, exp_r] = ReduceExp(b, clamped);
  // 2^n as 2^(n/2) * 2^(n - n/2): n runs from -126 to 128 on the clamped range, and each half
  // stays within the exponents of normal floats.
  llvm::Value* whole = b.CreateFPToSI(n, int_type);
  llvm::Value* half = b.CreateAShr(whole, llvm::ConstantInt::get(int_type, 1));
  auto power_of_two = [&](llvm::Value* exponent) {
    llvm::Value* biased = b.CreateAdd(exponent, llvm::ConstantInt::get(int_type, 127));
    return b.CreateBitCast(b.CreateShl(biased, llvm::ConstantInt::get(int_type, 23)), type);
  };
  llvm::Value* result =
      b.CreateFMul(b.CreateFMul(exp_r, power_of_two(half)), power_of_two(b.CreateSub(whole, half)));
  result = b.CreateSelect(b.CreateFCmpOGT(x, Splat(b, type, kMaxLog)),
                          Splat(b, type, std::numeric_limits<double>::infinity()), result);
  result = b.CreateSelect(b.CreateFCmpOLT(x, Splat(b, type, kMinLog)), Splat(b, type, 0.0), result);
  return b.CreateSelect(b.CreateFCmpUNO(x, x), x, result);
}

llvm::Value* EmitTanhF32(llvm::IRBuilder<>& b, llvm::Value* x, bool avx512) {
  llvm::Type* type = x->getType();
  // 1 - 2 / (e^(2|x|) + 1), its sign from x: 1 where e^(2|x|) overflows.
  llvm::Value* abs = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
  llvm::Value* e = EmitExpF32(b, b.CreateFMul(abs, Splat(b, type, 2.0)), avx512);
  llvm::Value* far = b.CreateFSub(Splat(b, type, 1.0),
                                  b.CreateFDiv(Splat(b, type, 2.0), b.CreateFAdd(e, Splat(b, type, 1.0))));
  far = b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, far, x);
  // tanh's Taylor series to x^15: below 8e-9 relative error under 0.5.
  return OddSeriesNearZero(b, x, {1.0, -1.0 / 3, 2.0 / 15, -17.0 / 315, 62.0 / 2835, -1382.0 / 155925,
                                  21844.0 / 6081075, -929569.0 / 638512875},
                           0.5, far);
}

llvm::Value* EmitErfF32(llvm::IRBuilder<>& b, llvm::Value* x, bool avx512) {
  llvm::Type* type = x->getType();
  // erfc(|x|) = t e^(-x^2 + P(t)), t = 1 / (1 + |x| / 2); erf = 1 - erfc, its sign from x.
  llvm::Value* abs = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
  llvm::Value* t = b.CreateFDiv(Splat(b, type, 1.0), Fma(b, abs, Splat(b, type, 0.5), Splat(b, type, 1.0)));
  llvm::Value* exponent = Polynomial(b, t, {-1.26551223, 1.00002368, 0.37409196, 0.09678418, -0.18628806,
                                            0.27886807, -1.13520398, 1.48851587, -0.82215223, 0.17087277});
  exponent = b.CreateFSub(exponent, b.CreateFMul(abs, abs));
  llvm::Value* far = b.CreateFSub(Splat(b, type, 1.0), b.CreateFMul(t, EmitExpF32(b, exponent, avx512)));
  far = b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, far, x);
  // erf's Taylor series, 2/sqrt(pi) sum (-1)^n x^(2n+1) / (n! (2n+1)), to x^13: below 1e-9
  // relative error under 0.5.
  std::vector<double> series;
  double factorial = 1;
  for (int n = 0; n < 7; ++n) {
    if (n > 0) factorial *= n;
    series.push_back((n % 2 ? -2.0 : 2.0) / std::sqrt(M_PI) / (factorial * (2 * n + 1)));
  }
  return OddSeriesNearZero(b, x, series, 0.5, far);
}

}  // namespace tuned::codegen::internal

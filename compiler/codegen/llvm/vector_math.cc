// float32 exp, tanh and erf emitted inline. exp: Cody and Waite's range reduction, x = n ln2 + r
// with |r| <= ln2 / 2, e^r from a degree-7 polynomial (coefficients as in Moshier's Cephes expf,
// published figures), 2^n put into the float's exponent field. tanh and erf: odd rational fits
// x P(x^2) / Q(x^2) on a clamped range (the coefficients XLA and Eigen publish for float32, within
// 4 ulp over the range), about 15 vector instructions and one division, where a form through exp
// and a Taylor series near 0 took about 50 and made GELU compute-bound.

#include "compiler/codegen/llvm/vector_math_internal.h"

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

// x P(x^2) / Q(x^2) with x clamped to [-bound, bound]: one division and no exp. The compares
// are false for NaN, which passes through.
llvm::Value* OddRational(llvm::IRBuilder<>& b, llvm::Value* x, double bound, const std::vector<double>& p,
                         const std::vector<double>& q) {
  llvm::Value* lo = Splat(b, x->getType(), -bound), *hi = Splat(b, x->getType(), bound);
  llvm::Value* clamped = b.CreateSelect(b.CreateFCmpOLT(x, lo), lo, x);
  clamped = b.CreateSelect(b.CreateFCmpOGT(clamped, hi), hi, clamped);
  llvm::Value* square = b.CreateFMul(clamped, clamped);
  return b.CreateFDiv(b.CreateFMul(clamped, Polynomial(b, square, p)), Polynomial(b, square, q));
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

llvm::Value* EmitTanhF32(llvm::IRBuilder<>& b, llvm::Value* x) {
  // Past |x| = 7.905 tanh rounds to 1 in float32.
  return OddRational(b, x, 7.90531110763549805,
                     {4.89352455891786e-03, 6.37261928875436e-04, 1.48572235717979e-05, 5.12229709037114e-08,
                      -8.60467152213735e-11, 2.00018790482477e-13, -2.76076847742355e-16},
                     {4.89352518554385e-03, 2.26843463243900e-03, 1.18534705686654e-04, 1.19825839466702e-06});
}

llvm::Value* EmitErfF32(llvm::IRBuilder<>& b, llvm::Value* x) {
  // Past |x| = 4 erf rounds to 1 in float32.
  return OddRational(b, x, 4.0,
                     {-1.60960333262415e-02, -2.95459980854025e-03, -7.34990630326855e-04, -5.69250639462346e-05,
                      -2.10102402082508e-06, 2.77068142495902e-08, -2.72614225801306e-10},
                     {-1.42647390514189e-02, -7.37332916720468e-03, -1.68282697438203e-03, -2.13374055278905e-04,
                      -1.45660718464996e-05});
}

}  // namespace tuned::codegen::internal

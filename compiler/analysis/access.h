#ifndef TUNED_COMPILER_ANALYSIS_ACCESS_H_
#define TUNED_COMPILER_ANALYSIS_ACCESS_H_

/// \file
/// How a buffer access moves as a loop runs: its flattened row-major offset and its stride
/// along one loop variable. The LLVM code generator decides vector loads, stores and gathers
/// with it; the cost model's stride features are the same answers.

#include <cstdint>
#include <optional>
#include <vector>

#include "compiler/ir/ir.h"
#include "compiler/ir/simplify.h"

namespace tuned::analysis {

/// The constant range [min, min + extent - 1] of `loop`'s variable, when both are constants
/// and the extent is positive: what the code generator knows about a loop counter.
std::optional<ir::Interval> ConstantLoopRange(const ir::For& loop);

/// A divisor of `e` known from its terms (0 when `e` is the constant 0): 1 unless constants
/// and constant factors show more. What makes a vector access aligned (GPU vector loads, CPU
/// streaming stores).
int64_t KnownDivisor(const ir::Expr& e);

/// The row-major element offset of `indices` in a buffer of `shape` as an int64 expression, as
/// written (not simplified): enough to classify accesses (StrideAlong simplifies only when the
/// offset is not plainly affine in the loop variable).
ir::Expr RowMajorOffset(const std::vector<int64_t>& shape, const std::vector<ir::Expr>& indices);

/// RowMajorOffset simplified with the given loop-variable bounds: what code is generated from.
ir::Expr FlatOffset(const std::vector<int64_t>& shape, const std::vector<ir::Expr>& indices,
                    const ir::VarBounds& bounds);

/// offset(var + 1) - offset(var) when it is a constant over `bounds` (which must bound `var`
/// to all but its last value), i.e. when `offset` is affine in `var`; nullopt otherwise.
std::optional<int64_t> ConstantStride(const ir::Expr& offset, const ir::Var& var,
                                      const ir::VarBounds& bounds);

/// ConstantStride with `bounds` holding `var`'s whole range (its last value is dropped here).
/// An offset plainly affine in `var` (sums, differences, products with constants, integer
/// casts) gives its exact coefficient without simplifying.
std::optional<int64_t> StrideAlong(const ir::Expr& offset, const ir::Var& var,
                                   const ir::VarBounds& bounds);

/// What consecutive values of a loop variable do to an access.
enum class AccessPattern {
  kInvariant,   // the offset does not use the variable
  kUnitStride,  // consecutive elements (a vector load or store)
  kStrided,     // anything else: a constant stride other than 1, or none (a gather or scatter)
};

/// The pattern of `offset` along `var` and its constant stride (0 when invariant, nullopt when
/// not constant); `bounds` as for StrideAlong. One stride computation for both answers.
struct AccessAlong {
  AccessPattern pattern;
  std::optional<int64_t> stride;
};
AccessAlong AnalyzeAccess(const ir::Expr& offset, const ir::Var& var, const ir::VarBounds& bounds);

/// The largest constant stride whose vector loads the code generator reads as the contiguous span
/// of the lanes' elements ((lanes - 1) * stride + 1 of them: at most `stride` vector loads) and a
/// shuffle picking every stride-th element, rather than as a gather (one load per lane). A
/// stride-2 row of a convolution is two loads and a permute; a wider stride reads mostly
/// elements it drops.
inline constexpr int64_t kMaxSpanLoadStride = 4;

/// Whether a vector load of `access` reads its span and shuffles (kMaxSpanLoadStride); anything
/// else strided is a gather. Stores of a strided access are scatters.
inline bool LoadsAsSpan(const AccessAlong& access) {
  return access.pattern == AccessPattern::kStrided && access.stride && *access.stride > 1 &&
         *access.stride <= kMaxSpanLoadStride;
}

/// The pattern of `offset` along `var`; `bounds` as for StrideAlong.
AccessPattern ClassifyAccess(const ir::Expr& offset, const ir::Var& var,
                             const ir::VarBounds& bounds);

/// The one dimension of `buffer` whose index uses `var`, the same in every load of `buffer` in
/// `expr`; -1 where there is none, or `var` moves two dimensions, or the loads disagree.
int DimensionWalked(const ir::Expr& expr, const ir::BufferNode* buffer, const ir::VarNode* var);

}  // namespace tuned::analysis

#endif  // TUNED_COMPILER_ANALYSIS_ACCESS_H_

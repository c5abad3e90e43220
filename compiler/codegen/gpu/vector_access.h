#ifndef TUNED_COMPILER_CODEGEN_GPU_VECTOR_ACCESS_H_
#define TUNED_COMPILER_CODEGEN_GPU_VECTOR_ACCESS_H_

/// \file
/// Whether a vectorized loop of a GPU kernel prints as float2/float4 loads and stores: the one
/// decision the GPU source printer asks. A loop qualifies only when every access that moves with
/// it is provably an aligned run of consecutive float32 elements; otherwise it stays a plain loop.
/// The strides come from compiler/analysis/access.h, the analysis the CPU code generator and the
/// cost model's features use.
///
/// The rule: the loop is ForKind::kVectorized with a constant start and an extent of 2 or 4 (the
/// width); its body is one store, optionally under a branch without else whose condition neither
/// uses the loop variable nor loads memory; the stored buffer and every loaded buffer whose
/// offset uses the variable are float32, base-aligned (`aligned` says which: the printer
/// guarantees global arguments and its shared arrays) and unit-stride along the variable, and
/// their first lane's flat offset is a multiple of the width term by term (constants, and products
/// with a constant factor that is). The stored buffer may be read only at the stored element.

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "compiler/ir/ir.h"
#include "compiler/ir/simplify.h"
#include "compiler/lower/gpu/gpu_program.h"

namespace tuned::codegen::gpu {

/// A vector access of one buffer: the first lane's flat element offset.
struct VectorRun {
  const ir::Load* load = nullptr;  // null for the store
  ir::Expr first_offset;
};

struct VectorLoop {
  int64_t width = 0;              // 2 or 4
  const ir::Store* store = nullptr;
  ir::Expr guard;                 // undefined without one; the same for every lane
  VectorRun stored;               // the store's run
  std::vector<VectorRun> loads;   // loads that move with the loop, read as vectors
};

/// `loop` as a vector loop, or nullopt when it stays a plain (scalar) loop. `bounds` holds the
/// variables around the loop (not the loop's own); `aligned` tells whether a buffer's base is
/// aligned to 16 bytes.
std::optional<VectorLoop> PlanVectorLoop(const ir::For& loop, const ir::VarBounds& bounds,
                                         const std::function<bool(const ir::BufferNode*)>& aligned);

/// The `aligned` of PlanVectorLoop for loops of `kernel`: the bases the printer aligns to 16
/// bytes, its global parameters and its shared arrays (not local arrays).
bool BaseAligned(const lower::gpu::GpuKernel& kernel, const ir::BufferNode* buffer);


}  // namespace tuned::codegen::gpu

#endif  // TUNED_COMPILER_CODEGEN_GPU_VECTOR_ACCESS_H_

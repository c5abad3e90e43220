#ifndef TUNED_COMPILER_LOWER_GPU_GPU_PROGRAM_H_
#define TUNED_COMPILER_LOWER_GPU_GPU_PROGRAM_H_

/// \file
/// The result of GPU lowering: kernels in launch order, each an SPMD body that every thread of
/// its grid runs, with its launch configuration. This is the contract between GPU lowering, the
/// GPU source printer (compiler/codegen/gpu) and the GPU interpreter with its race checker:
/// - a kernel's body refers to its thread axes (blockIdx.x, threadIdx.y, ...) as free variables
///   of `axes`; the thread-bound loops of the loop program are gone;
/// - `shared` buffers live for the whole kernel, one copy per block; local buffers are
///   Allocates in the body, one copy per thread; global intermediates live in the program;
/// - barriers (ir::Barrier) sit only where every thread of a block reaches them.

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "compiler/ir/ir.h"

namespace tuned::lower::gpu {

/// One hardware index of a kernel: `tag` is "blockIdx.x" ... "threadIdx.z".
struct ThreadAxis {
  std::string tag;
  ir::Var var;
  int64_t extent = 1;
};

struct GpuKernel {
  std::string name;                      // a C identifier
  std::vector<ir::Buffer> params;        // global buffers it uses, in program order
  std::vector<ir::Buffer> written;       // the params it stores to
  std::array<int64_t, 3> grid = {1, 1, 1};   // blocks per dimension (x, y, z)
  std::array<int64_t, 3> block = {1, 1, 1};  // threads per block per dimension
  std::vector<ThreadAxis> axes;          // blockIdx x..z, then threadIdx x..z, the bound ones
  std::vector<ir::Buffer> shared;        // allocated at kernel scope
  int64_t shared_bytes = 0;
  bool index_32bit = true;               // every index and loop value fits in int32
  ir::Stmt body;

  int64_t threads_per_block() const { return block[0] * block[1] * block[2]; }
};

struct GpuProgram {
  std::string name;
  std::vector<ir::Buffer> args;           // the workload's inputs, then its output
  std::vector<ir::Buffer> intermediates;  // global buffers written by one kernel, read by a later one
  std::vector<GpuKernel> kernels;         // launched in this order
};

/// Row-major flat offset of `indices` in `buffer`, simplified.
ir::Expr FlatIndex(const ir::Buffer& buffer, const std::vector<ir::Expr>& indices);

/// True for "threadIdx.*" tags, false for "blockIdx.*".
bool IsThreadIdx(const std::string& tag);
/// 0, 1, 2 for the x, y, z of a tag.
int TagDimension(const std::string& tag);

}  // namespace tuned::lower::gpu

#endif  // TUNED_COMPILER_LOWER_GPU_GPU_PROGRAM_H_

#ifndef TUNED_COMPILER_CODEGEN_LLVM_CODEGEN_LLVM_H_
#define TUNED_COMPILER_CODEGEN_LLVM_CODEGEN_LLVM_H_

/// \file
/// Lowered programs → LLVM IR → optimised native code for a CPU target, as text (LLVM IR,
/// assembly) or as an ELF/Mach-O/COFF object file. The JIT (llvm_jit.h) shares the translation.
///
/// C ABI of a generated kernel `f` whose LoweredFunc has arguments a_0 .. a_{n-1} (inputs, then
/// the packed buffers, then the output):
///
///   void f(T_0* a_0, ..., T_{n-1}* a_{n-1});   // one pointer per buffer, dense row-major
///   void f_packed(void* const* args);          // the same, args[i] = a_i (for generic callers)
///   void f_prepack(...), f_prepack_packed(...) // with packed buffers only: the same arguments;
///                                              // fills them from the constant inputs, to be
///                                              // called once before f runs on those values
///
/// with T = int8_t/int32_t/int64_t/_Float16 (uint16_t storage)/float/double. The caller
/// guarantees, and the generated code assumes (LLVM `noalias align 64`):
/// - every pointer is aligned to 64 bytes (runtime::AlignedBuffer provides this);
/// - the output does not overlap any input (inputs may overlap each other);
/// - buffers hold at least their shape's element count.
/// Parallel loops call `tuned_parallel_for` and global-scope scratch calls `tuned_runtime_alloc`
/// / `tuned_runtime_free` (compiler/runtime/parallel.h), so an object file links against
/// tuned_runtime (and the OpenMP runtime) plus libm.
///
/// Translation rules (see docs/codegen_llvm.md):
/// - index arithmetic is 64-bit; buffers are addressed through their flattened row-major offset;
/// - `vectorized` loops of constant extent become LLVM vector instructions when lanes may run in
///   lockstep (analysis/loop_analysis.h, VectorizeBlocker): unit-stride accesses are vector loads/stores,
///   lane-invariant ones scalar loads broadcast (under a mask: loaded while any lane is active,
///   never a gather of one address), others gathers/scatters; branches on a lane-dependent
///   condition become masks; a blocked loop is emitted as a plain loop and logged;
/// - `unrolled` loops of constant extent are copied `extent` times (at most kMaxUnrollCopies);
/// - inside a loop annotated with auto_unroll_max_step = S > 0, every inner serial loop of
///   constant extent whose LoopSteps (extent x steps of its body) is at most S is unrolled
///   (analysis/unroll.h decides both; the cost model reads the same decision);
/// - `parallel` loops are outlined and run through tuned_parallel_for with the target's
///   -num-cores threads (CodegenOptions::num_threads overrides); a parallel loop nested in
///   another parallel loop runs serially inside it;
/// - local/shared allocations are stack arrays in the function's entry block (promoted to
///   registers by LLVM when every index is constant after unrolling), up to kMaxStackBytes;
///   global-scope scratch too up to kMaxStackScratchBytes (a row's buffer inside a parallel loop
///   would otherwise be a malloc per row); larger ones are heap allocations;
/// - on x86, an output of at least kMinStreamingStoreBytes that the kernel never reads is written
///   with streaming (non-temporal) stores where a whole unmasked vector store is provably aligned
///   to its size (analysis::KnownDivisor of its first lane's offset), and the function ends with
///   an sfence; the stores skip reading each line in first (a third of an elementwise op's traffic);
/// - a*b+c on floats is llvm.fmuladd (one rounding where the target has FMA), exactly where
///   analysis/fma.h MatchFma finds a contraction;
/// - Select, && and || evaluate an operand that loads or may trap only when it is chosen;
/// - float32 exp (and sigmoid's), tanh and erf are emitted inline (vector_math_internal.h), not
///   a libm call per lane; a vector divided by a lane-uniform value is multiplied by its reciprocal;
/// - a vectorized loop wider than one register and no power of two in lanes (3 x 16) is emitted
///   one register at a time; a masked access whose lanes all lie in a stack array is a plain
///   load, select and store, which LLVM keeps in registers (an edge tile's accumulators).

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "compiler/analysis/unroll.h"
#include "compiler/codegen/llvm/cpu_target.h"
#include "compiler/lower/lowered_func.h"

namespace tuned::codegen {

using analysis::kMaxUnrollCopies;
inline constexpr int64_t kMaxStackBytes = 256 * 1024;
/// Largest global-scope scratch buffer allocated on the stack.
inline constexpr int64_t kMaxStackScratchBytes = 64 * 1024;
/// Smallest output written with streaming stores: larger than the last-level caches of the
/// machines tuned runs on (32 MiB of L3 per Zen 3 and Zen 4 chiplet), so it goes to memory
/// anyway, and its lines need not be read in first.
inline constexpr int64_t kMinStreamingStoreBytes = 32 << 20;

struct CodegenOptions {
  /// Threads of parallel loops; 0 uses the target's -num-cores.
  int num_threads = 0;
};

/// The LLVM this build generates code with, as records carry it (DeviceInfo.toolkit_version):
/// "LLVM 16.0.6". The worker stamps it on what it measures; the compiler looks records up by it.
std::string LlvmToolkitVersion();

/// Name of the packed-arguments entry point of kernel `name`.
std::string PackedName(const std::string& name);

/// The module for `funcs` as LLVM IR text, before (optimize = false) or after the O3 pipeline.
StatusOr<std::string> EmitLlvmIr(const std::vector<lower::LoweredFunc>& funcs,
                                 const target::Target& target, const CodegenOptions& options = {},
                                 bool optimize = true);

/// The optimised module as target assembly text.
StatusOr<std::string> EmitAssembly(const std::vector<lower::LoweredFunc>& funcs,
                                   const target::Target& target, const CodegenOptions& options = {});

/// The optimised module as a relocatable, position-independent object file (bytes), ready to
/// be linked into an executable or a shared library.
StatusOr<std::string> EmitObject(const std::vector<lower::LoweredFunc>& funcs,
                                 const target::Target& target, const CodegenOptions& options = {});

/// EmitObject written to `path`.
Status WriteObjectFile(const std::vector<lower::LoweredFunc>& funcs, const target::Target& target,
                       const std::string& path, const CodegenOptions& options = {});

/// A C header declaring the kernels of `funcs` with the ABI above.
std::string EmitCHeader(const std::vector<lower::LoweredFunc>& funcs);

}  // namespace tuned::codegen

#endif  // TUNED_COMPILER_CODEGEN_LLVM_CODEGEN_LLVM_H_

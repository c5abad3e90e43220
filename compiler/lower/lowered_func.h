#ifndef TUNED_COMPILER_LOWER_LOWERED_FUNC_H_
#define TUNED_COMPILER_LOWER_LOWERED_FUNC_H_

/// \file
/// The result of lowering: one kernel as a loop program over its argument buffers. This is the
/// contract between lowering and every code generator and interpreter:
/// - `args` are the workload's inputs, then the packed buffers, then its output, all global;
///   every other buffer the body uses is introduced by an Allocate (scope local: registers/stack; shared: GPU shared memory;
///   global: heap scratch) and lives for the Allocate's body.
/// - Loads and stores index every dimension; buffers are row-major and dense.
/// - float16 buffers are storage only: loads yield float32, stores convert float32 to half.
/// - Loops start at `min` and run `extent` iterations; the kind says how they may execute.
/// - Packed buffers are what the schedule derives from constant inputs alone (a weight laid out
///   for the vector loop): `prepack` writes them from the inputs, once before the calls of
///   `body`, which reads them. A caller keeps them with the constants they came from.

#include <string>
#include <vector>

#include "compiler/ir/ir.h"

namespace tuned::lower {

struct LoweredFunc {
  std::string name;                 // a C identifier
  std::vector<ir::Buffer> args;     // inputs, then the packed buffers, then the output
  ir::Stmt body;
  ir::Stmt prepack;                 // undefined: no packed buffers
  size_t num_packed = 0;

  size_t num_inputs() const { return args.size() - 1 - num_packed; }
  const ir::Buffer& output() const { return args.back(); }
  /// Bytes of each packed buffer, in argument order.
  std::vector<uint64_t> PackedBytes() const {
    std::vector<uint64_t> bytes;
    for (size_t i = num_inputs(); i + 1 < args.size(); ++i) {
      bytes.push_back(uint64_t(args[i]->num_elements()) * uint64_t(args[i]->dtype.bytes()));
    }
    return bytes;
  }
};

/// The name of the prepack entry of kernel `name`.
inline std::string PrepackName(const std::string& name) { return name + "_prepack"; }

/// `func`'s prepack as a function of its own (the same arguments), for code generators.
inline LoweredFunc PrepackFunc(const LoweredFunc& func) {
  return LoweredFunc{PrepackName(func.name), func.args, func.prepack, ir::Stmt(), 0};
}

}  // namespace tuned::lower

#endif  // TUNED_COMPILER_LOWER_LOWERED_FUNC_H_

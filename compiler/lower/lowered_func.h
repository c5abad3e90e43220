#ifndef TUNED_COMPILER_LOWER_LOWERED_FUNC_H_
#define TUNED_COMPILER_LOWER_LOWERED_FUNC_H_

/// \file
/// The result of lowering: one kernel as a loop program over its argument buffers. This is the
/// contract between lowering and every code generator and interpreter:
/// - `args` are the workload's inputs then its output, all global; every other buffer the body
///   uses is introduced by an Allocate (scope local: registers/stack; shared: GPU shared memory;
///   global: heap scratch) and lives for the Allocate's body.
/// - Loads and stores index every dimension; buffers are row-major and dense.
/// - float16 buffers are storage only: loads yield float32, stores convert float32 to half.
/// - Loops start at `min` and run `extent` iterations; the kind says how they may execute.

#include <string>
#include <vector>

#include "compiler/ir/ir.h"

namespace tuned::lower {

struct LoweredFunc {
  std::string name;                 // a C identifier
  std::vector<ir::Buffer> args;     // inputs, then the output
  ir::Stmt body;
};

}  // namespace tuned::lower

#endif  // TUNED_COMPILER_LOWER_LOWERED_FUNC_H_

#ifndef TUNED_TESTS_UNIT_COMPILER_CODEGEN_CODEGEN_TEST_UTIL_H_
#define TUNED_TESTS_UNIT_COMPILER_CODEGEN_CODEGEN_TEST_UTIL_H_

/// \file
/// Helpers of the code generator tests: host values (doubles, as the interpreter and the
/// reference use them) to and from typed, 64-byte aligned kernel buffers, and running a
/// lowered program through the JIT.

#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "compiler/codegen/llvm/llvm_jit.h"
#include "compiler/lower/lowered_func.h"
#include "compiler/runtime/aligned_buffer.h"

namespace tuned::codegen::testing {

/// IEEE binary16 conversions (round to nearest even).
uint16_t FloatToHalf(float value);
float HalfToFloat(uint16_t bits);

/// `values` stored as `buffer`'s dtype.
runtime::AlignedBuffer ToDevice(const ir::Buffer& buffer, const std::vector<double>& values);
/// The elements of `data` (holding `buffer`'s dtype) as doubles.
std::vector<double> FromDevice(const ir::Buffer& buffer, const runtime::AlignedBuffer& data);

/// Compiles `func` with `jit` and runs it on `inputs` (by buffer name); returns the output. The
/// output starts filled with 0xff bytes (NaN for floats) so unwritten elements show up.
StatusOr<std::vector<double>> RunOnJit(LlvmJit& jit, const lower::LoweredFunc& func,
                                       const std::map<std::string, std::vector<double>>& inputs);

/// The host target, or a test failure.
target::Target HostTarget();

}  // namespace tuned::codegen::testing

#endif  // TUNED_TESTS_UNIT_COMPILER_CODEGEN_CODEGEN_TEST_UTIL_H_

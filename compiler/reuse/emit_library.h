#ifndef TUNED_COMPILER_REUSE_EMIT_LIBRARY_H_
#define TUNED_COMPILER_REUSE_EMIT_LIBRARY_H_

/// \file
/// Writes compiled kernels for linking into a user's program: an object file (linked with the
/// installed runtime archive: `pkg-config --libs tuned-runtime` or CMake's tuned::runtime) or a
/// self-contained shared library (the runtime, embedded in tuned, linked in by the system C
/// compiler), each with a C header beside it that says how to link it.

#include <string>
#include <vector>

#include "common/status.h"
#include "compiler/codegen/llvm/cpu_target.h"
#include "compiler/lower/lowered_func.h"

namespace tuned::reuse {

/// Writes `path` (.o or .so, chosen by its extension) and the header `path` with .h in place of
/// the extension; returns the header's path.
StatusOr<std::string> EmitLibrary(const std::vector<lower::LoweredFunc>& funcs,
                                  const target::Target& target, const std::string& path,
                                  const std::string& header_comment);

}  // namespace tuned::reuse

#endif  // TUNED_COMPILER_REUSE_EMIT_LIBRARY_H_

#ifndef TUNED_COMPILER_REUSE_EMIT_LIBRARY_H_
#define TUNED_COMPILER_REUSE_EMIT_LIBRARY_H_

/// \file
/// Writes compiled kernels for linking into a user's program: an object file (link it with
/// tuned's runtime archive, OpenMP and libm) or a self-contained shared library (the runtime
/// linked in, by the system C compiler), each with a C header beside it.

#include <string>
#include <vector>

#include "common/status.h"
#include "compiler/codegen/llvm/cpu_target.h"
#include "compiler/lower/lowered_func.h"

namespace tuned::reuse {

/// Writes `path` (.o or .so, chosen by its extension) and the header `path` with .h in place of
/// the extension; returns the header's path.
StatusOr<std::string> EmitLibrary(const std::vector<lower::LoweredFunc>& funcs,
                                  const codegen::CpuTarget& target, const std::string& path,
                                  const std::string& header_comment);

/// The runtime archive a shared library is linked with (from the build).
const char* RuntimeArchivePath();

}  // namespace tuned::reuse

#endif  // TUNED_COMPILER_REUSE_EMIT_LIBRARY_H_

#ifndef TUNED_COMPILER_IR_TDL_DEFINITION_H_
#define TUNED_COMPILER_IR_TDL_DEFINITION_H_

/// \file
/// The workload definition language ("tdl"): user-defined static-shape tensor operators as text,
/// whose canonical printed form is the workload's key. See README.md in this folder.
///
///   param M = 128, N = 128, K = 64
///   input A: float32[M, K]
///   input B: float32[K, N]
///   C[i: M, j: N] = sum[k: K](A[i, k] * B[k, j])
///
/// A definition's key is kKeyPrefix followed by its canonical one-line text: parameters are
/// substituted, axes named by position, spacing and parentheses fixed; so whitespace, the names
/// of axes and the order of parameters do not change it. Library ops keep their own keys
/// ("matmul(M=...)"); ParseWorkloadSpec accepts both kinds.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "compiler/ir/op_library.h"

namespace tuned::ir {

/// What every definition key starts with (never a library op's name followed by '(').
inline constexpr std::string_view kDefinitionKeyPrefix = "tdl: ";

struct DefinitionOptions {
  /// Names the text in errors: a file name, or "key".
  std::string source_name = "definition";
  /// `--param M=512` values: override the text's defaults; each must name a declared parameter.
  std::vector<std::pair<std::string, std::string>> params;
  SpecLimits limits;
};

/// Parses and checks a definition; errors are one line, "file:line:col: what; expected what".
StatusOr<Workload> ParseDefinition(std::string_view text, const DefinitionOptions& options = {});

/// Whether `key` is a definition key (starts with kDefinitionKeyPrefix).
bool IsDefinitionKey(std::string_view key);
/// Rebuilds a workload from its definition key.
StatusOr<Workload> ParseDefinitionKey(std::string_view key, const SpecLimits& limits = {});

/// The canonical text of any workload (library ops too), one statement a line; parsing it gives
/// a workload with the same definition.
std::string PrintDefinition(const Workload& workload);

/// The key `workload` has with no input marked constant: a model task's key in logs written
/// before weights were marked `const`. Its own key when it marks none.
std::string KeyWithoutConstants(const Workload& workload);

}  // namespace tuned::ir

#endif  // TUNED_COMPILER_IR_TDL_DEFINITION_H_

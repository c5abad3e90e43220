#ifndef TUNED_COMPILER_IR_TDL_PRINTER_H_
#define TUNED_COMPILER_IR_TDL_PRINTER_H_

/// \file
/// A workload to the canonical text of the definition language: inputs first, then stages in
/// order; axes named by position (the builder's names); every operator parenthesised but the
/// outermost; literals with their type suffix; floats written so they read back exactly.
/// Parsing the text rebuilds the workload (parse(print(w)) has the same definition as w).

#include <string>

#include "compiler/ir/workload.h"

namespace tuned::ir::tdl {

enum class Layout : uint8_t {
  kOneLine,  // statements joined by "; ": the key
  kLines,    // one statement a line: what `tuned db show` prints
};

/// `mark_constants` false prints constant inputs as plain ones (`input W: float32[...]`).
std::string Print(const Workload& workload, Layout layout, bool mark_constants = true);

}  // namespace tuned::ir::tdl

#endif  // TUNED_COMPILER_IR_TDL_PRINTER_H_

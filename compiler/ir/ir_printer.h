#ifndef TUNED_COMPILER_IR_IR_PRINTER_H_
#define TUNED_COMPILER_IR_IR_PRINTER_H_

/// \file
/// Renders IR as readable text: expressions inline, statements as an indented loop program.
/// The output is stable (it feeds workload keys), so changing it is a format change.

#include <string>

#include "compiler/ir/ir.h"

namespace tuned::ir {

std::string ToString(const Expr& e);
std::string ToString(const Stmt& s);

}  // namespace tuned::ir

#endif  // TUNED_COMPILER_IR_IR_PRINTER_H_

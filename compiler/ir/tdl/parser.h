#ifndef TUNED_COMPILER_IR_TDL_PARSER_H_
#define TUNED_COMPILER_IR_TDL_PARSER_H_

/// \file
/// Text to syntax tree. The grammar, in full, is the comment at the top of parser.cc.

#include <string_view>

#include "compiler/ir/tdl/ast.h"

namespace tuned::ir::tdl {

StatusOr<AstProgram> Parse(std::string_view text, const Source& source);

}  // namespace tuned::ir::tdl

#endif  // TUNED_COMPILER_IR_TDL_PARSER_H_

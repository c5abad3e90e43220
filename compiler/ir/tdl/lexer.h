#ifndef TUNED_COMPILER_IR_TDL_LEXER_H_
#define TUNED_COMPILER_IR_TDL_LEXER_H_

/// \file
/// Tokens of the workload definition language (see grammar in parser.cc). Every token keeps its
/// line and column so that every error can point at it.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace tuned::ir::tdl {

enum class TokenKind : uint8_t {
  kName,     // identifiers and keywords
  kInt,      // 12, 12i32, 12i8
  kFloat,    // 1.5, 1e-3, 1.5f64
  kSymbol,   // ( ) [ ] , : = + - * / < <= > >= == != && || !
  kEnd,      // end of a statement: newline or ';'
  kEof,
};

struct Token {
  TokenKind kind = TokenKind::kEof;
  std::string text;  // as written
  int line = 1;
  int col = 1;
};

/// Where text comes from, for messages: "op.tdl", or "key" for a workload key. `first_col`
/// shifts the columns of the first line (a key's text after its prefix).
struct Source {
  std::string name;
  int first_col = 1;
};

/// Splits `text` into tokens; '#' starts a comment to the end of the line. A newline ends a
/// statement (kEnd) unless it is inside brackets or parentheses or follows an operator.
StatusOr<std::vector<Token>> Lex(std::string_view text, const Source& source);

/// "op.tdl:3:14: <message>": the one shape of every error of the language.
Status ErrorAt(const Source& source, const Token& token, const std::string& message);

}  // namespace tuned::ir::tdl

#endif  // TUNED_COMPILER_IR_TDL_LEXER_H_

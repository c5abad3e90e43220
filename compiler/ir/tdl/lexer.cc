#include "compiler/ir/tdl/lexer.h"

#include <cctype>

namespace tuned::ir::tdl {
namespace {

bool IsNameStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool IsNameChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool IsDigit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

}  // namespace

Status ErrorAt(const Source& source, const Token& token, const std::string& message) {
  return InvalidArgumentError(source.name + ":" + std::to_string(token.line) + ":" +
                              std::to_string(token.col) + ": " + message);
}

StatusOr<std::vector<Token>> Lex(std::string_view text, const Source& source) {
  std::vector<Token> tokens;
  int line = 1, col = source.first_col;
  int depth = 0;  // open brackets and parentheses
  size_t i = 0;
  auto push = [&](TokenKind kind, size_t begin, size_t end, int start_col) {
    tokens.push_back({kind, std::string(text.substr(begin, end - begin)), line, start_col});
  };
  auto end_statement = [&](int at_col) {
    if (!tokens.empty() && tokens.back().kind != TokenKind::kEnd) {
      tokens.push_back({TokenKind::kEnd, "end of statement", line, at_col});
    }
  };
  while (i < text.size()) {
    const char c = text[i];
    const int start_col = col;
    if (c == '\n') {
      // A line ending inside brackets or after an operator continues on the next line.
      const bool continues = depth > 0 || (!tokens.empty() && tokens.back().kind == TokenKind::kSymbol &&
                                           tokens.back().text != ")" && tokens.back().text != "]");
      if (!continues) end_statement(col);
      ++i, ++line, col = 1;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r') {
      ++i, ++col;
      continue;
    }
    if (c == '#') {
      while (i < text.size() && text[i] != '\n') ++i, ++col;
      continue;
    }
    if (c == ';') {
      end_statement(col);
      ++i, ++col;
      continue;
    }
    size_t begin = i;
    if (IsNameStart(c)) {
      while (i < text.size() && IsNameChar(text[i])) ++i;
      push(TokenKind::kName, begin, i, start_col);
    } else if (IsDigit(c) || (c == '.' && i + 1 < text.size() && IsDigit(text[i + 1]))) {
      bool is_float = false;
      while (i < text.size() && IsDigit(text[i])) ++i;
      if (i < text.size() && text[i] == '.') {
        is_float = true;
        ++i;
        while (i < text.size() && IsDigit(text[i])) ++i;
      }
      if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
        size_t j = i + 1;
        if (j < text.size() && (text[j] == '+' || text[j] == '-')) ++j;
        if (j < text.size() && IsDigit(text[j])) {
          is_float = true;
          i = j;
          while (i < text.size() && IsDigit(text[i])) ++i;
        }
      }
      // A type suffix: i8/i32/i64 on integers, f64/f32 on either (3f64 is a float).
      if (i < text.size() && (text[i] == 'i' || text[i] == 'f')) {
        if (text[i] == 'f') is_float = true;
        ++i;
        while (i < text.size() && IsDigit(text[i])) ++i;
      }
      if (i < text.size() && IsNameChar(text[i])) {
        while (i < text.size() && IsNameChar(text[i])) ++i;
        Token bad{TokenKind::kSymbol, std::string(text.substr(begin, i - begin)), line, start_col};
        return ErrorAt(source, bad, "malformed number '" + bad.text +
                                        "'; expected digits with an optional type suffix "
                                        "(i8, i32, i64, f32, f64)");
      }
      push(is_float ? TokenKind::kFloat : TokenKind::kInt, begin, i, start_col);
    } else {
      static constexpr std::string_view kTwoChar[] = {"<=", ">=", "==", "!=", "&&", "||"};
      static constexpr std::string_view kOneChar = "()[],:=+-*/<>!";
      bool matched = false;
      for (std::string_view two : kTwoChar) {
        if (text.substr(i, 2) == two) {
          i += 2;
          matched = true;
          break;
        }
      }
      if (!matched) {
        if (kOneChar.find(c) == std::string_view::npos) {
          Token bad{TokenKind::kSymbol, std::string(1, c), line, start_col};
          return ErrorAt(source, bad, "unexpected character '" + bad.text +
                                          "'; expected a name, a number or an operator");
        }
        ++i;
      }
      push(TokenKind::kSymbol, begin, i, start_col);
      if (c == '(' || c == '[') ++depth;
      if ((c == ')' || c == ']') && depth > 0) --depth;
    }
    col += int(i - begin);
  }
  end_statement(col);
  tokens.push_back({TokenKind::kEof, "end of input", line, col});
  return tokens;
}

}  // namespace tuned::ir::tdl

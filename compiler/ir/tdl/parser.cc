// The grammar of the workload definition language, complete (a recursive-descent parser, one
// function per rule below). Statements end at a newline or ';'; '#' starts a comment.
//
//   program    := { statement END }
//   statement  := 'param' param { ',' param }
//               | 'input' NAME ':' [ 'const' ] DTYPE '[' expr { ',' expr } ']'
//               | NAME '[' axis { ',' axis } ']' [ ':' DTYPE ] '=' expr
//   param      := NAME [ '=' expr ]
//   axis       := NAME ':' expr                          (an extent: integers and parameters)
//   expr       := or
//   or         := and { '||' and }
//   and        := compare { '&&' compare }
//   compare    := additive [ ('==' | '!=' | '<' | '<=' | '>' | '>=') additive ]
//   additive   := term { ('+' | '-') term }
//   term       := unary { ('*' | '/') unary }
//   unary      := ('-' | '!') unary | primary
//   primary    := INT | FLOAT | NAME                      (an axis, a parameter, true, false)
//               | NAME '[' expr { ',' expr } ']'         (a read of a tensor)
//               | REDUCER '[' axis { ',' axis } ']' '(' expr ')'
//               | FUNCTION '(' expr { ',' expr } ')'
//               | '(' expr ')'
//   REDUCER    := 'sum' | 'max' | 'min'  (followed by '[')
//   FUNCTION   := exp log sqrt tanh sigmoid fabs erf min max floordiv floormod select | DTYPE (a cast)
//   DTYPE      := float16 float32 float64 int8 int32 int64
//   INT        := digits [ 'i8' | 'i32' | 'i64' ]        FLOAT := digits '.' digits [exp] ['f64']
//
// Which names exist, how types combine and what a reduction may contain are the checker's
// rules (elaborate.cc), not the grammar's.

#include "compiler/ir/tdl/parser.h"

#include <algorithm>
#include <initializer_list>

namespace tuned::ir::tdl {
namespace {

// Deepest expression tree (and parser recursion) a definition may have: far beyond what is
// written by hand, well within the stack of every pass that walks an expression.
constexpr int kMaxExprDepth = 256;

class Parser {
 public:
  Parser(std::vector<Token> tokens, const Source& source)
      : tokens_(std::move(tokens)), source_(source) {}

  StatusOr<AstProgram> Program() {
    AstProgram program;
    while (Peek().kind != TokenKind::kEof) {
      if (Peek().kind == TokenKind::kEnd) {
        ++pos_;
        continue;
      }
      TUNED_ASSIGN_OR_RETURN(AstStatement statement, Statement());
      if (Peek().kind != TokenKind::kEnd && Peek().kind != TokenKind::kEof) {
        return Expected("the end of the statement (a newline or ';')");
      }
      program.statements.push_back(std::move(statement));
    }
    return program;
  }

 private:
  const Token& Peek(size_t ahead = 0) const {
    return tokens_[std::min(pos_ + ahead, tokens_.size() - 1)];
  }
  bool IsSymbol(std::string_view s, size_t ahead = 0) const {
    return Peek(ahead).kind == TokenKind::kSymbol && Peek(ahead).text == s;
  }
  bool IsKeyword(std::string_view s) const {
    return Peek().kind == TokenKind::kName && Peek().text == s;
  }
  Status Expected(const std::string& what) const {
    return ErrorAt(source_, Peek(), "unexpected '" + Peek().text + "'; expected " + what);
  }
  Status Eat(std::string_view symbol) {
    if (!IsSymbol(symbol)) return Expected("'" + std::string(symbol) + "'");
    ++pos_;
    return Status::Ok();
  }
  StatusOr<Token> Name(const std::string& what) {
    if (Peek().kind != TokenKind::kName) return Expected(what);
    return tokens_[pos_++];
  }

  StatusOr<AstStatement> Statement() {
    AstStatement st;
    if (IsKeyword("param")) {
      ++pos_;
      st.kind = AstStatement::Kind::kParam;
      TUNED_ASSIGN_OR_RETURN(st.params, ParamList());
      return st;
    }
    if (IsKeyword("input")) {
      ++pos_;
      st.kind = AstStatement::Kind::kInput;
      TUNED_ASSIGN_OR_RETURN(st.input.name, Name("the name of the input"));
      TUNED_RETURN_IF_ERROR(Eat(":"));
      if (IsKeyword("const")) {
        ++pos_;
        st.input.constant = true;
      }
      TUNED_ASSIGN_OR_RETURN(st.input.dtype, Name("a dtype (float32, float64, float16, int32, int8, int64)"));
      TUNED_RETURN_IF_ERROR(Eat("["));
      while (true) {
        TUNED_ASSIGN_OR_RETURN(AstExprPtr dim, Expr());
        st.input.shape.push_back(std::move(dim));
        if (!IsSymbol(",")) break;
        ++pos_;
      }
      TUNED_RETURN_IF_ERROR(Eat("]"));
      return st;
    }
    st.kind = AstStatement::Kind::kStage;
    TUNED_ASSIGN_OR_RETURN(st.stage.name, Name("'param', 'input' or the name of a stage"));
    TUNED_RETURN_IF_ERROR(Eat("["));
    TUNED_ASSIGN_OR_RETURN(st.stage.axes, Axes());
    TUNED_RETURN_IF_ERROR(Eat("]"));
    if (IsSymbol(":")) {
      ++pos_;
      TUNED_ASSIGN_OR_RETURN(st.stage.dtype, Name("a dtype (float32, float64, float16, int32, int8, int64)"));
    }
    TUNED_RETURN_IF_ERROR(Eat("="));
    TUNED_ASSIGN_OR_RETURN(st.stage.body, Expr());
    return st;
  }

  StatusOr<std::vector<AstParam>> ParamList() {
    std::vector<AstParam> params;
    while (true) {
      AstParam p;
      TUNED_ASSIGN_OR_RETURN(p.name, Name("the name of a parameter"));
      if (IsSymbol("=")) {
        ++pos_;
        TUNED_ASSIGN_OR_RETURN(p.value, Expr());
      }
      params.push_back(std::move(p));
      if (!IsSymbol(",")) break;
      ++pos_;
    }
    return params;
  }

  StatusOr<std::vector<AstAxis>> Axes() {
    std::vector<AstAxis> axes;
    while (true) {
      AstAxis axis;
      TUNED_ASSIGN_OR_RETURN(axis.name, Name("the name of an axis"));
      TUNED_RETURN_IF_ERROR(Eat(":"));
      TUNED_ASSIGN_OR_RETURN(axis.extent, Expr());
      axes.push_back(std::move(axis));
      if (!IsSymbol(",")) break;
      ++pos_;
    }
    return axes;
  }

  static AstExprPtr Node(AstExpr::Kind kind, Token token) {
    auto e = std::make_unique<AstExpr>();
    e->kind = kind;
    e->token = std::move(token);
    return e;
  }
  static AstExprPtr BinaryNode(Token op, AstExprPtr a, AstExprPtr b) {
    AstExprPtr e = Node(AstExpr::Kind::kBinary, std::move(op));
    e->args.push_back(std::move(a));
    e->args.push_back(std::move(b));
    return e;
  }

  // Every pass over an expression recurses on its tree, so its depth is bounded here, where the
  // error can point at the operator: a long chain (a + a + ...) is as deep as a nesting.
  StatusOr<AstExprPtr> Finished(AstExprPtr e) const {
    for (const AstExprPtr& arg : e->args) e->depth = std::max(e->depth, arg->depth + 1);
    if (e->depth > kMaxExprDepth) return TooDeep(e->token);
    return e;
  }

  Status TooDeep(const Token& at) const {
    return ErrorAt(source_, at, "expression nested deeper than " + std::to_string(kMaxExprDepth) +
                                    " levels; expected a shallower one (split it into stages)");
  }

  // Counts the parser's own recursion (parentheses return their inner node, so the tree's depth
  // alone does not bound it).
  struct Nesting {
    explicit Nesting(int& level) : level_(level) { ++level_; }
    ~Nesting() { --level_; }
    int& level_;
  };

  // One left-associative level of binary operators.
  template <typename Next>
  StatusOr<AstExprPtr> LeftAssoc(std::initializer_list<std::string_view> ops, Next next,
                                 bool chain = true) {
    TUNED_ASSIGN_OR_RETURN(AstExprPtr lhs, (this->*next)());
    while (true) {
      bool matched = false;
      for (std::string_view op : ops) matched = matched || IsSymbol(op);
      if (!matched) return lhs;
      Token op = tokens_[pos_++];
      TUNED_ASSIGN_OR_RETURN(AstExprPtr rhs, (this->*next)());
      TUNED_ASSIGN_OR_RETURN(lhs, Finished(BinaryNode(std::move(op), std::move(lhs), std::move(rhs))));
      if (!chain) return lhs;
    }
  }

  StatusOr<AstExprPtr> Expr() {
    Nesting nesting(nesting_);
    if (nesting_ > kMaxExprDepth) return TooDeep(Peek());
    return LeftAssoc({"||"}, &Parser::And);
  }
  StatusOr<AstExprPtr> And() { return LeftAssoc({"&&"}, &Parser::Compare); }
  StatusOr<AstExprPtr> Compare() {
    return LeftAssoc({"==", "!=", "<", "<=", ">", ">="}, &Parser::Additive, /*chain=*/false);
  }
  StatusOr<AstExprPtr> Additive() { return LeftAssoc({"+", "-"}, &Parser::Term); }
  StatusOr<AstExprPtr> Term() { return LeftAssoc({"*", "/"}, &Parser::Unary); }

  StatusOr<AstExprPtr> Unary() {
    if (IsSymbol("-") || IsSymbol("!")) {
      Nesting nesting(nesting_);
      if (nesting_ > kMaxExprDepth) return TooDeep(Peek());
      AstExprPtr e = Node(AstExpr::Kind::kUnary, tokens_[pos_++]);
      TUNED_ASSIGN_OR_RETURN(AstExprPtr operand, Unary());
      e->args.push_back(std::move(operand));
      return Finished(std::move(e));
    }
    return Primary();
  }

  StatusOr<std::vector<AstExprPtr>> ExprList(std::string_view close) {
    std::vector<AstExprPtr> list;
    while (true) {
      TUNED_ASSIGN_OR_RETURN(AstExprPtr e, Expr());
      list.push_back(std::move(e));
      if (!IsSymbol(",")) break;
      ++pos_;
    }
    TUNED_RETURN_IF_ERROR(Eat(close));
    return list;
  }

  StatusOr<AstExprPtr> Primary() {
    const Token& t = Peek();
    if (t.kind == TokenKind::kInt) return Node(AstExpr::Kind::kInt, tokens_[pos_++]);
    if (t.kind == TokenKind::kFloat) return Node(AstExpr::Kind::kFloat, tokens_[pos_++]);
    if (IsSymbol("(")) {
      ++pos_;
      TUNED_ASSIGN_OR_RETURN(AstExprPtr e, Expr());
      TUNED_RETURN_IF_ERROR(Eat(")"));
      return e;
    }
    if (t.kind != TokenKind::kName) return Expected("an expression");
    Token name = tokens_[pos_++];
    const bool reducer = name.text == "sum" || name.text == "max" || name.text == "min";
    if (reducer && IsSymbol("[")) {
      ++pos_;
      AstExprPtr e = Node(AstExpr::Kind::kReduce, std::move(name));
      TUNED_ASSIGN_OR_RETURN(e->axes, Axes());
      TUNED_RETURN_IF_ERROR(Eat("]"));
      TUNED_RETURN_IF_ERROR(Eat("("));
      TUNED_ASSIGN_OR_RETURN(AstExprPtr body, Expr());
      TUNED_RETURN_IF_ERROR(Eat(")"));
      e->args.push_back(std::move(body));
      return Finished(std::move(e));
    }
    if (IsSymbol("[")) {
      ++pos_;
      AstExprPtr e = Node(AstExpr::Kind::kRead, std::move(name));
      TUNED_ASSIGN_OR_RETURN(e->args, ExprList("]"));
      return Finished(std::move(e));
    }
    if (IsSymbol("(")) {
      ++pos_;
      AstExprPtr e = Node(AstExpr::Kind::kCall, std::move(name));
      TUNED_ASSIGN_OR_RETURN(e->args, ExprList(")"));
      return Finished(std::move(e));
    }
    return Node(AstExpr::Kind::kName, std::move(name));
  }

  std::vector<Token> tokens_;
  const Source& source_;
  size_t pos_ = 0;
  int nesting_ = 0;
};

}  // namespace

StatusOr<AstProgram> Parse(std::string_view text, const Source& source) {
  TUNED_ASSIGN_OR_RETURN(std::vector<Token> tokens, Lex(text, source));
  return Parser(std::move(tokens), source).Program();
}

}  // namespace tuned::ir::tdl

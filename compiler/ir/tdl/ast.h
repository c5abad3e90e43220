#ifndef TUNED_COMPILER_IR_TDL_AST_H_
#define TUNED_COMPILER_IR_TDL_AST_H_

/// \file
/// The syntax tree of a workload definition, as parsed and before any name is resolved. Each
/// node keeps the token it starts at, for errors.

#include <memory>
#include <optional>
#include <vector>

#include "compiler/ir/tdl/lexer.h"

namespace tuned::ir::tdl {

struct AstExpr;
using AstExprPtr = std::unique_ptr<AstExpr>;

/// `name: extent` — a spatial axis of a stage or a reduction axis.
struct AstAxis {
  Token name;
  AstExprPtr extent;
};

struct AstExpr {
  enum class Kind : uint8_t {
    kInt,     // token: the literal
    kFloat,   // token: the literal
    kName,    // token: an axis or a parameter (true/false too)
    kRead,    // token: the tensor; args: indices
    kCall,    // token: the function (intrinsic, min/max, select, a cast's dtype); args
    kReduce,  // token: sum/max/min; axes; args[0]: the body
    kUnary,   // token: '-' or '!'; args[0]
    kBinary,  // token: the operator; args[0], args[1]
  };
  Kind kind = Kind::kInt;
  Token token;
  std::vector<AstExprPtr> args;
  std::vector<AstAxis> axes;
  int depth = 1;  // of the tree below and including this node (the parser bounds it)
};

/// `param M = 128` (a default) or `param M` (bound at the command line).
struct AstParam {
  Token name;
  AstExprPtr value;  // null: no default
};

/// `input A: float32[M, K]`
struct AstInput {
  Token name;
  bool constant = false;  // `input w: const float32[...]`
  Token dtype;
  std::vector<AstExprPtr> shape;
};

/// `C[i: M, j: N]: float32 = body` (the dtype is optional).
struct AstStage {
  Token name;
  std::vector<AstAxis> axes;
  std::optional<Token> dtype;
  AstExprPtr body;
};

struct AstStatement {
  enum class Kind : uint8_t { kParam, kInput, kStage };
  Kind kind = Kind::kParam;
  std::vector<AstParam> params;  // kParam: `param M = 1, N = 2` declares two
  AstInput input;
  AstStage stage;
};

struct AstProgram {
  std::vector<AstStatement> statements;
};

}  // namespace tuned::ir::tdl

#endif  // TUNED_COMPILER_IR_TDL_AST_H_

// ExprFunctor and StmtFunctor call the hook of each node's own kind, pass the extra arguments
// through, and return the hook's value.

#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "compiler/ir/expr_functor.h"
#include "compiler/ir/ir.h"

namespace tuned::ir {
namespace {

// Names the hook it lands in, prefixed with the extra argument.
class HookNamer : public ExprFunctor<std::string(const Expr&, const std::string&)>,
                  public StmtFunctor<std::string(const Stmt&, int)> {
 protected:
  std::string VisitIntImm(const IntImm* op, const std::string& p) override {
    return p + "IntImm" + std::to_string(op->value);
  }
  std::string VisitFloatImm(const FloatImm*, const std::string& p) override { return p + "FloatImm"; }
  std::string VisitVar(const VarNode* op, const std::string& p) override { return p + "Var:" + op->name; }
  std::string VisitBinary(const Binary*, const std::string& p) override { return p + "Binary"; }
  std::string VisitNot(const Not*, const std::string& p) override { return p + "Not"; }
  std::string VisitSelect(const Select*, const std::string& p) override { return p + "Select"; }
  std::string VisitCast(const Cast*, const std::string& p) override { return p + "Cast"; }
  std::string VisitLoad(const Load* op, const std::string& p) override {
    return p + "Load:" + op->buffer->name;
  }
  std::string VisitCall(const Call*, const std::string& p) override { return p + "Call"; }
  std::string VisitFor(const For* op, int depth) override {
    return std::to_string(depth) + "For:" + op->var->name;
  }
  std::string VisitStore(const Store*, int depth) override { return std::to_string(depth) + "Store"; }
  std::string VisitAllocate(const Allocate*, int depth) override {
    return std::to_string(depth) + "Allocate";
  }
  std::string VisitIfThenElse(const IfThenElse*, int depth) override {
    return std::to_string(depth) + "IfThenElse";
  }
  std::string VisitSeq(const Seq* op, int depth) override {
    return std::to_string(depth) + "Seq" + std::to_string(op->stmts.size());
  }
  std::string VisitBarrier(const Barrier*, int depth) override { return std::to_string(depth) + "Barrier"; }
};

TEST(ExprFunctor, EveryExpressionKindReachesItsOwnHook) {
  Var i = MakeVar("i");
  Buffer a = MakeBuffer("a", DataType::Float32(), {8});
  const std::vector<std::pair<Expr, std::string>> cases = {
      {MakeInt(7), "IntImm7"},
      {MakeFloat(1.5), "FloatImm"},
      {AsExpr(i), "Var:i"},
      {AsExpr(i) + MakeInt(1), "Binary"},
      {MakeNot(AsExpr(i) < MakeInt(3)), "Not"},
      {MakeSelect(AsExpr(i) < MakeInt(3), MakeFloat(1.0), MakeFloat(2.0)), "Select"},
      {MakeCast(DataType::Float32(), AsExpr(i)), "Cast"},
      {MakeLoad(a, {AsExpr(i)}), "Load:a"},
      {MakeCall(Intrinsic::kExp, {MakeFloat(1.0)}), "Call"},
  };
  static_assert(int(ExprKind::kCall) + 1 == 9, "a new expression kind needs a case here");
  HookNamer namer;
  for (const auto& [e, hook] : cases) EXPECT_EQ(namer.VisitExpr(e, "x."), "x." + hook);
}

TEST(StmtFunctor, EveryStatementKindReachesItsOwnHook) {
  Var i = MakeVar("i");
  Buffer t = MakeBuffer("t", DataType::Float32(), {8});
  Stmt store = MakeStore(t, {AsExpr(i)}, MakeFloat(0.0));
  Stmt other = MakeStore(t, {MakeInt(0)}, MakeFloat(1.0));
  const std::vector<std::pair<Stmt, std::string>> cases = {
      {MakeFor(i, MakeInt(0), MakeInt(8), ForKind::kSerial, store), "For:i"},
      {store, "Store"},
      {MakeAllocate(t, store), "Allocate"},
      {MakeIfThenElse(AsExpr(i) < MakeInt(3), store), "IfThenElse"},
      {MakeSeq({store, other}), "Seq2"},
      {MakeBarrier(), "Barrier"},
  };
  static_assert(int(StmtKind::kBarrier) + 1 == 6, "a new statement kind needs a case here");
  HookNamer namer;
  for (const auto& [s, hook] : cases) EXPECT_EQ(namer.VisitStmt(s, 3), "3" + hook);
}

}  // namespace
}  // namespace tuned::ir

// IRVisitor and IRMutator have one hook per node kind, and their defaults reach every node.

#include <map>
#include <string>

#include <gtest/gtest.h>

#include "compiler/ir/ir.h"
#include "compiler/ir/ir_mutator.h"
#include "compiler/ir/ir_printer.h"

namespace tuned::ir {
namespace {

// One of every node kind: for i { allocate t { if (!(i < 3)) { t[i] = select(i < 5, float(a[i]),
// exp(2.0)); } else { seq { } } } }
Stmt EveryKindProgram() {
  Var i = MakeVar("i");
  Buffer a = MakeBuffer("a", DataType::Int32(), {8});
  Buffer t = MakeBuffer("t", DataType::Float32(), {8}, MemoryScope::kLocal);
  Expr lt3 = MakeBinary(BinaryOp::kLT, AsExpr(i), MakeInt(3));
  Expr value = MakeSelect(MakeBinary(BinaryOp::kLT, AsExpr(i), MakeInt(5)),
                          MakeCast(DataType::Float32(), MakeLoad(a, {AsExpr(i)})),
                          MakeCall(Intrinsic::kExp, {MakeFloat(2.0)}));
  Stmt store = MakeStore(t, {AsExpr(i)}, value);
  Stmt branch = MakeIfThenElse(MakeNot(lt3), store, MakeSeq({}));
  return MakeFor(i, MakeInt(0), MakeInt(8), ForKind::kSerial, MakeAllocate(t, branch));
}

class KindCounter : public IRVisitor {
 public:
  std::map<std::string, int> seen;

 protected:
  void VisitIntImm(const IntImm*) override { ++seen["int"]; }
  void VisitFloatImm(const FloatImm*) override { ++seen["float"]; }
  void VisitVar(const VarNode*) override { ++seen["var"]; }
  void VisitBinary(const Binary* op) override { ++seen["binary"]; IRVisitor::VisitBinary(op); }
  void VisitNot(const Not* op) override { ++seen["not"]; IRVisitor::VisitNot(op); }
  void VisitSelect(const Select* op) override { ++seen["select"]; IRVisitor::VisitSelect(op); }
  void VisitCast(const Cast* op) override { ++seen["cast"]; IRVisitor::VisitCast(op); }
  void VisitLoad(const Load* op) override { ++seen["load"]; IRVisitor::VisitLoad(op); }
  void VisitCall(const Call* op) override { ++seen["call"]; IRVisitor::VisitCall(op); }
  void VisitFor(const For* op) override { ++seen["for"]; IRVisitor::VisitFor(op); }
  void VisitStore(const Store* op) override { ++seen["store"]; IRVisitor::VisitStore(op); }
  void VisitAllocate(const Allocate* op) override { ++seen["allocate"]; IRVisitor::VisitAllocate(op); }
  void VisitIfThenElse(const IfThenElse* op) override { ++seen["if"]; IRVisitor::VisitIfThenElse(op); }
  void VisitSeq(const Seq* op) override { ++seen["seq"]; IRVisitor::VisitSeq(op); }
};

TEST(IRVisitor, DefaultHooksReachEveryNodeKind) {
  KindCounter counter;
  counter.Visit(EveryKindProgram());
  std::map<std::string, int> expected = {
      {"for", 1},  {"allocate", 1}, {"if", 1},   {"seq", 1},    {"store", 1}, {"not", 1}, {"binary", 2},
      {"select", 1}, {"cast", 1},   {"load", 1}, {"call", 1},   {"float", 1},
      {"int", 4},  // for min, for extent, 3, 5
      {"var", 4},  // i in i<3, i<5, a[i], t[i]
  };
  EXPECT_EQ(counter.seen, expected);
}

// Replaces exp(x) by x and every select by its false branch: overriding two hooks is enough.
class CallAndSelectRewriter : public IRMutator {
 protected:
  Expr MutateCall(const Call* op, const Expr& self) override { return Mutate(op->args[0]); }
  Expr MutateSelect(const Select* op, const Expr& self) override { return Mutate(op->false_value); }
};

TEST(IRMutator, OverridingOneHookRewritesOnlyThatKind) {
  Stmt program = EveryKindProgram();
  CallAndSelectRewriter rewriter;
  Stmt rewritten = rewriter.Mutate(program);
  std::string text = ToString(rewritten);
  EXPECT_EQ(text.find("select"), std::string::npos) << text;
  EXPECT_EQ(text.find("exp"), std::string::npos) << text;
  EXPECT_NE(text.find("t[i] = 2"), std::string::npos) << text;
  EXPECT_NE(text.find("allocate"), std::string::npos) << text;  // the rest is rebuilt around it

  KindCounter counter;
  counter.Visit(rewritten);
  EXPECT_EQ(counter.seen.count("select"), 0u);
  EXPECT_EQ(counter.seen.count("call"), 0u);
  EXPECT_EQ(counter.seen["if"], 1);
}

TEST(IRMutator, UnchangedTreesAreSharedNotCopied) {
  Stmt program = EveryKindProgram();
  IRMutator identity;
  EXPECT_TRUE(identity.Mutate(program).same_as(program));
}

}  // namespace
}  // namespace tuned::ir

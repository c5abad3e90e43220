#ifndef TUNED_COMPILER_IR_IR_MUTATOR_H_
#define TUNED_COMPILER_IR_IR_MUTATOR_H_

/// \file
/// IRVisitor walks an IR tree read-only; IRMutator rebuilds it bottom-up and returns the original
/// handle whenever nothing below changed, so an unchanged subtree is shared, not copied.
///
/// Both have one hook per node kind; the default of each visits (or rebuilds) the node's
/// children, so a pass overrides only the kinds it cares about and calls the base hook to keep
/// descending. Both dispatch through ExprFunctor/StmtFunctor (expr_functor.h), the one place
/// that switches over node kinds; a pass that computes a value per node derives from those.

#include <unordered_map>

#include "compiler/ir/expr_functor.h"
#include "compiler/ir/ir.h"

namespace tuned::ir {

class IRVisitor : protected ExprFunctor<void(const Expr&)>, protected StmtFunctor<void(const Stmt&)> {
 public:
  virtual void Visit(const Expr& e) { VisitExpr(e); }
  virtual void Visit(const Stmt& s) { VisitStmt(s); }

 protected:
  void VisitIntImm(const IntImm*) override {}
  void VisitFloatImm(const FloatImm*) override {}
  void VisitVar(const VarNode*) override {}
  void VisitBinary(const Binary* op) override;
  void VisitNot(const Not* op) override;
  void VisitSelect(const Select* op) override;
  void VisitCast(const Cast* op) override;
  void VisitLoad(const Load* op) override;
  void VisitCall(const Call* op) override;
  void VisitFor(const For* op) override;
  void VisitStore(const Store* op) override;
  void VisitAllocate(const Allocate* op) override;
  void VisitIfThenElse(const IfThenElse* op) override;
  void VisitSeq(const Seq* op) override;
  void VisitBarrier(const Barrier*) override {}
};

// The functors' extra argument is the node's own handle, so an unchanged node can return it.
class IRMutator : private ExprFunctor<Expr(const Expr&, const Expr&)>,
                  private StmtFunctor<Stmt(const Stmt&, const Stmt&)> {
 public:
  virtual Expr Mutate(const Expr& e) { return VisitExpr(e, e); }
  virtual Stmt Mutate(const Stmt& s) { return VisitStmt(s, s); }

 protected:
  virtual Expr MutateIntImm(const IntImm* op, const Expr& self) { return self; }
  virtual Expr MutateFloatImm(const FloatImm* op, const Expr& self) { return self; }
  virtual Expr MutateVar(const VarNode* op, const Expr& self) { return self; }
  virtual Expr MutateBinary(const Binary* op, const Expr& self);
  virtual Expr MutateNot(const Not* op, const Expr& self);
  virtual Expr MutateSelect(const Select* op, const Expr& self);
  virtual Expr MutateCast(const Cast* op, const Expr& self);
  virtual Expr MutateLoad(const Load* op, const Expr& self);
  virtual Expr MutateCall(const Call* op, const Expr& self);
  virtual Stmt MutateFor(const For* op, const Stmt& self);
  virtual Stmt MutateStore(const Store* op, const Stmt& self);
  virtual Stmt MutateAllocate(const Allocate* op, const Stmt& self);
  virtual Stmt MutateIfThenElse(const IfThenElse* op, const Stmt& self);
  virtual Stmt MutateSeq(const Seq* op, const Stmt& self);
  virtual Stmt MutateBarrier(const Barrier* op, const Stmt& self) { return self; }
  /// Mutates every index; returns true if any changed.
  bool MutateIndices(const std::vector<Expr>& in, std::vector<Expr>& out);

 private:
  Expr VisitIntImm(const IntImm* op, const Expr& self) final { return MutateIntImm(op, self); }
  Expr VisitFloatImm(const FloatImm* op, const Expr& self) final { return MutateFloatImm(op, self); }
  Expr VisitVar(const VarNode* op, const Expr& self) final { return MutateVar(op, self); }
  Expr VisitBinary(const Binary* op, const Expr& self) final { return MutateBinary(op, self); }
  Expr VisitNot(const Not* op, const Expr& self) final { return MutateNot(op, self); }
  Expr VisitSelect(const Select* op, const Expr& self) final { return MutateSelect(op, self); }
  Expr VisitCast(const Cast* op, const Expr& self) final { return MutateCast(op, self); }
  Expr VisitLoad(const Load* op, const Expr& self) final { return MutateLoad(op, self); }
  Expr VisitCall(const Call* op, const Expr& self) final { return MutateCall(op, self); }
  Stmt VisitFor(const For* op, const Stmt& self) final { return MutateFor(op, self); }
  Stmt VisitStore(const Store* op, const Stmt& self) final { return MutateStore(op, self); }
  Stmt VisitAllocate(const Allocate* op, const Stmt& self) final { return MutateAllocate(op, self); }
  Stmt VisitIfThenElse(const IfThenElse* op, const Stmt& self) final {
    return MutateIfThenElse(op, self);
  }
  Stmt VisitSeq(const Seq* op, const Stmt& self) final { return MutateSeq(op, self); }
  Stmt VisitBarrier(const Barrier* op, const Stmt& self) final { return MutateBarrier(op, self); }
};

/// Replaces variables by expressions.
using VarMap = std::unordered_map<const VarNode*, Expr>;
Expr Substitute(const Expr& e, const VarMap& map);
Stmt Substitute(const Stmt& s, const VarMap& map);

/// True if `e` mentions any variable in `vars` (or any variable at all when `vars` is null).
bool UsesVar(const Expr& e, const VarNode* var);

}  // namespace tuned::ir

#endif  // TUNED_COMPILER_IR_IR_MUTATOR_H_

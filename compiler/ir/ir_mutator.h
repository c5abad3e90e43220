#ifndef TUNED_COMPILER_IR_IR_MUTATOR_H_
#define TUNED_COMPILER_IR_IR_MUTATOR_H_

/// \file
/// IRVisitor walks an IR tree read-only; IRMutator rebuilds it bottom-up and returns the original
/// handle whenever nothing below changed, so an unchanged subtree is shared, not copied.
///
/// Both have one hook per node kind; the default of each visits (or rebuilds) the node's
/// children, so a pass overrides only the kinds it cares about and calls the base hook to keep
/// descending. Visit/Mutate are the only places that switch over node kinds.

#include <unordered_map>

#include "compiler/ir/ir.h"

namespace tuned::ir {

class IRVisitor {
 public:
  virtual ~IRVisitor() = default;
  virtual void Visit(const Expr& e);
  virtual void Visit(const Stmt& s);

 protected:
  virtual void VisitIntImm(const IntImm*) {}
  virtual void VisitFloatImm(const FloatImm*) {}
  virtual void VisitVar(const VarNode*) {}
  virtual void VisitBinary(const Binary* op);
  virtual void VisitNot(const Not* op);
  virtual void VisitSelect(const Select* op);
  virtual void VisitCast(const Cast* op);
  virtual void VisitLoad(const Load* op);
  virtual void VisitCall(const Call* op);
  virtual void VisitFor(const For* op);
  virtual void VisitStore(const Store* op);
  virtual void VisitAllocate(const Allocate* op);
  virtual void VisitIfThenElse(const IfThenElse* op);
  virtual void VisitSeq(const Seq* op);
};

class IRMutator {
 public:
  virtual ~IRMutator() = default;
  virtual Expr Mutate(const Expr& e);
  virtual Stmt Mutate(const Stmt& s);

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
  /// Mutates every index; returns true if any changed.
  bool MutateIndices(const std::vector<Expr>& in, std::vector<Expr>& out);
};

/// Replaces variables by expressions.
using VarMap = std::unordered_map<const VarNode*, Expr>;
Expr Substitute(const Expr& e, const VarMap& map);
Stmt Substitute(const Stmt& s, const VarMap& map);

/// True if `e` mentions any variable in `vars` (or any variable at all when `vars` is null).
bool UsesVar(const Expr& e, const VarNode* var);

}  // namespace tuned::ir

#endif  // TUNED_COMPILER_IR_IR_MUTATOR_H_

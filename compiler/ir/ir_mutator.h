#ifndef TUNED_COMPILER_IR_IR_MUTATOR_H_
#define TUNED_COMPILER_IR_IR_MUTATOR_H_

/// \file
/// IRVisitor walks an IR tree read-only; IRMutator rebuilds it bottom-up and returns the original
/// handle whenever nothing below changed, so an unchanged subtree is shared, not copied.

#include <unordered_map>

#include "compiler/ir/ir.h"

namespace tuned::ir {

class IRVisitor {
 public:
  virtual ~IRVisitor() = default;
  virtual void Visit(const Expr& e);
  virtual void Visit(const Stmt& s);

 protected:
  virtual void VisitVar(const VarNode*) {}
  virtual void VisitLoad(const Load* op);
  virtual void VisitStore(const Store* op);
  virtual void VisitFor(const For* op);
};

class IRMutator {
 public:
  virtual ~IRMutator() = default;
  virtual Expr Mutate(const Expr& e);
  virtual Stmt Mutate(const Stmt& s);

 protected:
  virtual Expr MutateVar(const VarNode* op, const Expr& self) { return self; }
  virtual Expr MutateBinary(const Binary* op, const Expr& self);
  virtual Expr MutateLoad(const Load* op, const Expr& self);
  virtual Stmt MutateFor(const For* op, const Stmt& self);
  virtual Stmt MutateStore(const Store* op, const Stmt& self);
  virtual Stmt MutateAllocate(const Allocate* op, const Stmt& self);
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

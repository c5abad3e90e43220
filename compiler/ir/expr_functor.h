#ifndef TUNED_COMPILER_IR_EXPR_FUNCTOR_H_
#define TUNED_COMPILER_IR_EXPR_FUNCTOR_H_

/// \file
/// Value-returning dispatch over node kinds, the one place that switches on ExprKind and
/// StmtKind (IRVisitor and IRMutator are built on it too).
///
/// ExprFunctor<R(const Expr&, Args...)> has one hook per expression kind, each receiving the
/// typed node and the extra arguments; StmtFunctor<R(const Stmt&, Args...)> the same for
/// statements. Every hook is pure virtual: a new node kind breaks the build of every functor
/// until it is handled, so no pass can silently ignore one. Recursion is the hook's job: call
/// VisitExpr / VisitStmt on the children you want.

#include "common/check.h"
#include "compiler/ir/ir.h"

namespace tuned::ir {

template <typename FType>
class ExprFunctor;

template <typename R, typename... Args>
class ExprFunctor<R(const Expr&, Args...)> {
 public:
  virtual ~ExprFunctor() = default;

  /// Calls the hook of `e`'s kind.
  R VisitExpr(const Expr& e, Args... args) {
    switch (e->kind) {
      case ExprKind::kIntImm: return VisitIntImm(e.as<IntImm>(), args...);
      case ExprKind::kFloatImm: return VisitFloatImm(e.as<FloatImm>(), args...);
      case ExprKind::kVar: return VisitVar(e.as<VarNode>(), args...);
      case ExprKind::kBinary: return VisitBinary(e.as<Binary>(), args...);
      case ExprKind::kNot: return VisitNot(e.as<Not>(), args...);
      case ExprKind::kSelect: return VisitSelect(e.as<Select>(), args...);
      case ExprKind::kCast: return VisitCast(e.as<Cast>(), args...);
      case ExprKind::kLoad: return VisitLoad(e.as<Load>(), args...);
      case ExprKind::kCall: return VisitCall(e.as<Call>(), args...);
    }
    TUNED_UNREACHABLE("expression kind " << int(e->kind));
  }

 protected:
  virtual R VisitIntImm(const IntImm* op, Args... args) = 0;
  virtual R VisitFloatImm(const FloatImm* op, Args... args) = 0;
  virtual R VisitVar(const VarNode* op, Args... args) = 0;
  virtual R VisitBinary(const Binary* op, Args... args) = 0;
  virtual R VisitNot(const Not* op, Args... args) = 0;
  virtual R VisitSelect(const Select* op, Args... args) = 0;
  virtual R VisitCast(const Cast* op, Args... args) = 0;
  virtual R VisitLoad(const Load* op, Args... args) = 0;
  virtual R VisitCall(const Call* op, Args... args) = 0;
};

template <typename FType>
class StmtFunctor;

template <typename R, typename... Args>
class StmtFunctor<R(const Stmt&, Args...)> {
 public:
  virtual ~StmtFunctor() = default;

  /// Calls the hook of `s`'s kind.
  R VisitStmt(const Stmt& s, Args... args) {
    switch (s->kind) {
      case StmtKind::kFor: return VisitFor(s.as<For>(), args...);
      case StmtKind::kStore: return VisitStore(s.as<Store>(), args...);
      case StmtKind::kAllocate: return VisitAllocate(s.as<Allocate>(), args...);
      case StmtKind::kIfThenElse: return VisitIfThenElse(s.as<IfThenElse>(), args...);
      case StmtKind::kSeq: return VisitSeq(s.as<Seq>(), args...);
      case StmtKind::kBarrier: return VisitBarrier(s.as<Barrier>(), args...);
    }
    TUNED_UNREACHABLE("statement kind " << int(s->kind));
  }

 protected:
  virtual R VisitFor(const For* op, Args... args) = 0;
  virtual R VisitStore(const Store* op, Args... args) = 0;
  virtual R VisitAllocate(const Allocate* op, Args... args) = 0;
  virtual R VisitIfThenElse(const IfThenElse* op, Args... args) = 0;
  virtual R VisitSeq(const Seq* op, Args... args) = 0;
  virtual R VisitBarrier(const Barrier* op, Args... args) = 0;
};

}  // namespace tuned::ir

#endif  // TUNED_COMPILER_IR_EXPR_FUNCTOR_H_

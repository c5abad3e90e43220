#include "compiler/ir/ir_mutator.h"

#include "common/check.h"

namespace tuned::ir {

void IRVisitor::VisitBinary(const Binary* op) {
  Visit(op->a);
  Visit(op->b);
}

void IRVisitor::VisitNot(const Not* op) { Visit(op->a); }

void IRVisitor::VisitSelect(const Select* op) {
  Visit(op->cond);
  Visit(op->true_value);
  Visit(op->false_value);
}

void IRVisitor::VisitCast(const Cast* op) { Visit(op->value); }

void IRVisitor::VisitLoad(const Load* op) {
  for (const Expr& i : op->indices) Visit(i);
}

void IRVisitor::VisitCall(const Call* op) {
  for (const Expr& a : op->args) Visit(a);
}

void IRVisitor::VisitFor(const For* op) {
  Visit(op->min);
  Visit(op->extent);
  Visit(op->body);
}

void IRVisitor::VisitStore(const Store* op) {
  for (const Expr& i : op->indices) Visit(i);
  Visit(op->value);
}

void IRVisitor::VisitAllocate(const Allocate* op) { Visit(op->body); }

void IRVisitor::VisitIfThenElse(const IfThenElse* op) {
  Visit(op->cond);
  Visit(op->then_case);
  if (op->else_case.defined()) Visit(op->else_case);
}

void IRVisitor::VisitSeq(const Seq* op) {
  for (const Stmt& c : op->stmts) Visit(c);
}

bool IRMutator::MutateIndices(const std::vector<Expr>& in, std::vector<Expr>& out) {
  bool changed = false;
  out.reserve(in.size());
  for (const Expr& i : in) {
    out.push_back(Mutate(i));
    changed |= !out.back().same_as(i);
  }
  return changed;
}

Expr IRMutator::MutateBinary(const Binary* op, const Expr& self) {
  Expr a = Mutate(op->a), b = Mutate(op->b);
  if (a.same_as(op->a) && b.same_as(op->b)) return self;
  return MakeBinary(op->op, a, b);
}

Expr IRMutator::MutateNot(const Not* op, const Expr& self) {
  Expr a = Mutate(op->a);
  return a.same_as(op->a) ? self : MakeNot(a);
}

Expr IRMutator::MutateSelect(const Select* op, const Expr& self) {
  Expr c = Mutate(op->cond), t = Mutate(op->true_value), f = Mutate(op->false_value);
  if (c.same_as(op->cond) && t.same_as(op->true_value) && f.same_as(op->false_value)) return self;
  return MakeSelect(c, t, f);
}

Expr IRMutator::MutateCast(const Cast* op, const Expr& self) {
  Expr v = Mutate(op->value);
  return v.same_as(op->value) ? self : MakeCast(op->type, v);
}

Expr IRMutator::MutateLoad(const Load* op, const Expr& self) {
  std::vector<Expr> indices;
  if (!MutateIndices(op->indices, indices)) return self;
  return MakeLoad(op->buffer, std::move(indices));
}

Expr IRMutator::MutateCall(const Call* op, const Expr& self) {
  std::vector<Expr> args;
  if (!MutateIndices(op->args, args)) return self;
  return MakeCall(op->op, std::move(args));
}

Stmt IRMutator::MutateFor(const For* op, const Stmt& self) {
  Expr mn = Mutate(op->min), ext = Mutate(op->extent);
  Stmt body = Mutate(op->body);
  if (mn.same_as(op->min) && ext.same_as(op->extent) && body.same_as(op->body)) return self;
  return MakeFor(op->var, mn, ext, op->kind, body, op->thread_tag, op->auto_unroll_max_step,
                 op->prefetch_ahead);
}

Stmt IRMutator::MutateStore(const Store* op, const Stmt& self) {
  std::vector<Expr> indices;
  bool changed = MutateIndices(op->indices, indices);
  Expr value = Mutate(op->value);
  if (!changed && value.same_as(op->value)) return self;
  return MakeStore(op->buffer, std::move(indices), value);
}

Stmt IRMutator::MutateAllocate(const Allocate* op, const Stmt& self) {
  Stmt body = Mutate(op->body);
  return body.same_as(op->body) ? self : MakeAllocate(op->buffer, body);
}

Stmt IRMutator::MutateIfThenElse(const IfThenElse* op, const Stmt& self) {
  Expr c = Mutate(op->cond);
  Stmt t = Mutate(op->then_case);
  Stmt f = op->else_case.defined() ? Mutate(op->else_case) : Stmt();
  if (c.same_as(op->cond) && t.same_as(op->then_case) && f.same_as(op->else_case)) return self;
  return MakeIfThenElse(c, t, f);
}

Stmt IRMutator::MutateSeq(const Seq* op, const Stmt& self) {
  std::vector<Stmt> stmts;
  bool changed = false;
  for (const Stmt& c : op->stmts) {
    stmts.push_back(Mutate(c));
    changed |= !stmts.back().same_as(c);
  }
  return changed ? MakeSeq(std::move(stmts)) : self;
}

namespace {

class Substituter : public IRMutator {
 public:
  explicit Substituter(const VarMap& map) : map_(map) {}

 protected:
  Expr MutateVar(const VarNode* op, const Expr& self) override {
    auto it = map_.find(op);
    return it == map_.end() ? self : it->second;
  }

 private:
  const VarMap& map_;
};

class VarFinder : public IRVisitor {
 public:
  explicit VarFinder(const VarNode* var) : var_(var) {}
  bool found = false;

 protected:
  void VisitVar(const VarNode* op) override { found |= (var_ == nullptr || op == var_); }

 private:
  const VarNode* var_;
};

}  // namespace

Expr Substitute(const Expr& e, const VarMap& map) {
  if (map.empty()) return e;
  Substituter s(map);
  return s.Mutate(e);
}

Stmt Substitute(const Stmt& st, const VarMap& map) {
  if (map.empty()) return st;
  Substituter s(map);
  return s.Mutate(st);
}

bool UsesVar(const Expr& e, const VarNode* var) {
  VarFinder finder(var);
  finder.Visit(e);
  return finder.found;
}

}  // namespace tuned::ir

#include "compiler/lower/interpreter.h"

#include <cmath>
#include <deque>

#include "compiler/ir/evaluator.h"
#include "compiler/ir/expr_functor.h"

namespace tuned::lower {
namespace {

using namespace tuned::ir;

class Interpreter : private StmtFunctor<void(const Stmt&)> {
 public:
  Status Run(const Stmt& s) {
    Exec(s);
    return eval_.error();
  }
  ExprEvaluator& eval() { return eval_; }
  std::deque<HostTensor>& storage() { return storage_; }

 private:
  void Exec(const Stmt& s) {
    if (eval_.error().ok()) VisitStmt(s);
  }

  void VisitFor(const For* op) override {
    int64_t mn = int64_t(eval_.Eval(op->min)), ext = int64_t(eval_.Eval(op->extent));
    for (int64_t i = mn; i < mn + ext && eval_.error().ok(); ++i) {
      eval_.vars[op->var.get()] = i;
      Exec(op->body);
    }
    eval_.vars.erase(op->var.get());
  }

  void VisitStore(const Store* op) override {
    auto it = eval_.tensors.find(op->buffer.get());
    if (it == eval_.tensors.end()) {
      eval_.Fail(InternalError("store to unallocated buffer " + op->buffer->name));
      return;
    }
    double value = eval_.Eval(op->value);
    int64_t offset = eval_.Offset(*it->second, op->indices);
    if (offset >= 0) it->second->data[offset] = RoundToType(value, op->buffer->dtype);
  }

  void VisitAllocate(const Allocate* op) override {
    // Fresh storage filled with NaN so that reading before writing shows up as a wrong result.
    storage_.push_back({op->buffer, std::vector<double>(op->buffer->num_elements(), NAN), true});
    HostTensor* previous = nullptr;
    auto it = eval_.tensors.find(op->buffer.get());
    if (it != eval_.tensors.end()) previous = it->second;
    eval_.tensors[op->buffer.get()] = &storage_.back();
    Exec(op->body);
    if (previous) eval_.tensors[op->buffer.get()] = previous;
    else eval_.tensors.erase(op->buffer.get());
  }

  void VisitIfThenElse(const IfThenElse* op) override {
    if (eval_.Eval(op->cond) != 0) Exec(op->then_case);
    else if (op->else_case.defined()) Exec(op->else_case);
  }

  void VisitSeq(const Seq* op) override {
    for (const Stmt& c : op->stmts) Exec(c);
  }

  // A loop program runs one thread at a time: a barrier has nothing to wait for (GPU kernels
  // run through InterpretGpu, which gives barriers their meaning).
  void VisitBarrier(const Barrier*) override {}

  ExprEvaluator eval_;
  std::deque<HostTensor> storage_;
};

}  // namespace

StatusOr<std::vector<double>> Interpret(const LoweredFunc& func,
                                        const std::map<std::string, std::vector<double>>& inputs) {
  Interpreter interp;
  for (size_t i = 0; i < func.args.size(); ++i) {
    const Buffer& b = func.args[i];
    bool written = i >= func.num_inputs();  // packed buffers and the output
    std::vector<double> data;
    if (written) {
      data.assign(b->num_elements(), NAN);
    } else {
      auto it = inputs.find(b->name);
      if (it == inputs.end() || int64_t(it->second.size()) != b->num_elements()) {
        return InvalidArgumentError("interpret " + func.name + ": input " + b->name +
                                    " missing or of wrong size");
      }
      data = it->second;
    }
    interp.storage().push_back({b, std::move(data), true});
    interp.eval().tensors[b.get()] = &interp.storage().back();
  }
  if (func.prepack.defined()) {
    TUNED_RETURN_IF_ERROR(interp.Run(func.prepack).WithContext("interpret " + PrepackName(func.name)));
  }
  TUNED_RETURN_IF_ERROR(interp.Run(func.body).WithContext("interpret " + func.name));
  return interp.eval().tensors[func.args.back().get()]->data;
}

}  // namespace tuned::lower

// The GPU interpreter and its race checker (see interpreter.h). Threads of a block run in
// lockstep, one statement for all active threads at a time; that is one legal interleaving, and
// the checker makes the result independent of it: between two barriers (a phase), an element of
// shared memory may be touched by several threads only if none of them writes it.

#include <cmath>
#include <deque>
#include <memory>

#include "compiler/ir/evaluator.h"
#include "compiler/ir/expr_functor.h"
#include "compiler/lower/interpreter.h"

namespace tuned::lower {
namespace {

using namespace tuned::ir;

// Who touched one shared element in the current phase.
struct Shadow {
  int64_t write_phase = -1;
  int writer = -1;
  int64_t read_phase = -1;
  int reader = -1;        // the first reader of the phase
  bool many_readers = false;
  int other_reader = -1;  // a reader other than `reader`, when many
};

struct SharedTensor {
  HostTensor tensor;
  std::vector<Shadow> shadow;
};

class BlockRunner : private StmtFunctor<void(const Stmt&, const std::vector<int>&)> {
 public:
  BlockRunner(const gpu::GpuKernel& kernel, std::map<const BufferNode*, HostTensor*>& globals,
              std::array<int64_t, 3> block_index, bool check_races)
      : kernel_(kernel), block_index_(block_index), check_races_(check_races) {
    int64_t threads = kernel.threads_per_block();
    for (const Buffer& b : kernel.shared) {
      shared_.push_back(std::make_unique<SharedTensor>());
      shared_.back()->tensor = {b, std::vector<double>(b->num_elements(), NAN), true};
      shared_.back()->shadow.resize(b->num_elements());
      shared_by_buffer_[b.get()] = shared_.back().get();
    }
    evals_.resize(threads);
    for (int t = 0; t < threads; ++t) {
      ExprEvaluator& eval = evals_[t];
      for (auto& [buffer, tensor] : globals) eval.tensors[buffer] = tensor;
      for (auto& s : shared_) eval.tensors[s->tensor.buffer.get()] = &s->tensor;
      std::array<int64_t, 3> thread = ThreadIndex(t);
      for (const gpu::ThreadAxis& axis : kernel.axes) {
        int d = gpu::TagDimension(axis.tag);
        eval.vars[axis.var.get()] = gpu::IsThreadIdx(axis.tag) ? thread[d] : block_index_[d];
      }
      if (check_races_) {
        eval.on_load = [this, t](const BufferNode* buffer, int64_t offset) { OnRead(t, buffer, offset); };
      }
    }
  }

  Status Run() {
    std::vector<int> all(evals_.size());
    for (size_t t = 0; t < all.size(); ++t) all[t] = int(t);
    Exec(kernel_.body, all);
    if (!error_.ok()) return error_;
    for (ExprEvaluator& eval : evals_) TUNED_RETURN_IF_ERROR(eval.error());
    return Status::Ok();
  }

 private:
  std::array<int64_t, 3> ThreadIndex(int t) const {
    return {t % kernel_.block[0], (t / kernel_.block[0]) % kernel_.block[1],
            t / (kernel_.block[0] * kernel_.block[1])};
  }
  static std::string Triple(const std::array<int64_t, 3>& v) {
    return "(" + std::to_string(v[0]) + "," + std::to_string(v[1]) + "," + std::to_string(v[2]) + ")";
  }
  void Fail(Status status) {
    if (error_.ok()) error_ = std::move(status);
  }
  bool Failed() const { return !error_.ok(); }

  void Race(const BufferNode* buffer, int64_t offset, int first, const char* first_does, int second,
            const char* second_does) {
    Fail(InvalidArgumentError("race on shared " + buffer->name + "[" + std::to_string(offset) +
                              "] in block " + Triple(block_index_) + " of kernel " + kernel_.name +
                              ": thread " + Triple(ThreadIndex(first)) + " " + first_does +
                              " it, thread " + Triple(ThreadIndex(second)) + " " + second_does +
                              " it, no barrier between"));
  }

  void OnRead(int t, const BufferNode* buffer, int64_t offset) {
    auto it = shared_by_buffer_.find(buffer);
    if (it == shared_by_buffer_.end()) return;
    Shadow& s = it->second->shadow[offset];
    if (s.write_phase == phase_ && s.writer != t) Race(buffer, offset, s.writer, "writes", t, "reads");
    if (s.read_phase != phase_) {
      s.read_phase = phase_, s.reader = t, s.many_readers = false;
    } else if (s.reader != t && !s.many_readers) {
      s.many_readers = true, s.other_reader = t;
    }
  }

  void OnWrite(int t, const BufferNode* buffer, int64_t offset) {
    auto it = shared_by_buffer_.find(buffer);
    if (it == shared_by_buffer_.end()) return;
    Shadow& s = it->second->shadow[offset];
    if (s.write_phase == phase_ && s.writer != t) Race(buffer, offset, s.writer, "writes", t, "writes");
    if (s.read_phase == phase_ && (s.reader != t || s.many_readers)) {
      Race(buffer, offset, s.reader != t ? s.reader : s.other_reader, "reads", t, "writes");
    }
    s.write_phase = phase_, s.writer = t;
  }

  void Exec(const Stmt& s, const std::vector<int>& active) {
    if (!Failed() && !active.empty()) VisitStmt(s, active);
  }

  void VisitFor(const For* op, const std::vector<int>& active) override {
    ExprEvaluator& first = evals_[active[0]];
    int64_t mn = int64_t(first.Eval(op->min)), ext = int64_t(first.Eval(op->extent));
    for (int t : active) {
      if (int64_t(evals_[t].Eval(op->min)) != mn || int64_t(evals_[t].Eval(op->extent)) != ext) {
        Fail(InternalError("loop " + op->var->name + " has thread-dependent bounds"));
        return;
      }
    }
    for (int64_t i = mn; i < mn + ext && !Failed(); ++i) {
      for (int t : active) evals_[t].vars[op->var.get()] = i;
      Exec(op->body, active);
    }
    for (int t : active) evals_[t].vars.erase(op->var.get());
  }

  void VisitStore(const Store* op, const std::vector<int>& active) override {
    for (int t : active) {
      ExprEvaluator& eval = evals_[t];
      auto it = eval.tensors.find(op->buffer.get());
      if (it == eval.tensors.end()) {
        Fail(InternalError("store to unallocated buffer " + op->buffer->name));
        return;
      }
      double value = eval.Eval(op->value);
      int64_t offset = eval.Offset(*it->second, op->indices);
      if (!eval.error().ok()) {
        Fail(eval.error());
        return;
      }
      if (check_races_) OnWrite(t, op->buffer.get(), offset);
      it->second->data[offset] = RoundToType(value, op->buffer->dtype);
    }
  }

  void VisitAllocate(const Allocate* op, const std::vector<int>& active) override {
    // A local buffer: one fresh copy per thread, NaN so that a read before a write shows.
    std::vector<HostTensor*> previous;
    for (int t : active) {
      local_.push_back({op->buffer, std::vector<double>(op->buffer->num_elements(), NAN), true});
      auto it = evals_[t].tensors.find(op->buffer.get());
      previous.push_back(it == evals_[t].tensors.end() ? nullptr : it->second);
      evals_[t].tensors[op->buffer.get()] = &local_.back();
    }
    Exec(op->body, active);
    for (size_t i = 0; i < active.size(); ++i) {
      if (previous[i]) evals_[active[i]].tensors[op->buffer.get()] = previous[i];
      else evals_[active[i]].tensors.erase(op->buffer.get());
    }
  }

  void VisitIfThenElse(const IfThenElse* op, const std::vector<int>& active) override {
    std::vector<int> taken, not_taken;
    for (int t : active) (evals_[t].Eval(op->cond) != 0 ? taken : not_taken).push_back(t);
    Exec(op->then_case, taken);
    if (op->else_case.defined()) Exec(op->else_case, not_taken);
  }

  void VisitSeq(const Seq* op, const std::vector<int>& active) override {
    for (const Stmt& c : op->stmts) Exec(c, active);
  }

  void VisitBarrier(const Barrier*, const std::vector<int>& active) override {
    if (active.size() != evals_.size()) {
      Fail(InvalidArgumentError("kernel " + kernel_.name + ": a barrier reached by " +
                                std::to_string(active.size()) + " of the " +
                                std::to_string(evals_.size()) + " threads of block " +
                                Triple(block_index_)));
    }
    ++phase_;
  }

  const gpu::GpuKernel& kernel_;
  std::array<int64_t, 3> block_index_;
  bool check_races_;
  std::vector<ExprEvaluator> evals_;  // one per thread of the block
  std::vector<std::unique_ptr<SharedTensor>> shared_;
  std::map<const BufferNode*, SharedTensor*> shared_by_buffer_;
  std::deque<HostTensor> local_;
  int64_t phase_ = 0;
  Status error_;
};

}  // namespace

StatusOr<std::vector<double>> InterpretGpu(const gpu::GpuProgram& program,
                                           const std::map<std::string, std::vector<double>>& inputs,
                                           const GpuInterpretOptions& options) {
  std::deque<HostTensor> storage;
  std::map<const BufferNode*, HostTensor*> globals;
  for (size_t i = 0; i < program.args.size(); ++i) {
    const Buffer& b = program.args[i];
    std::vector<double> data(b->num_elements(), NAN);
    if (i + 1 < program.args.size()) {
      auto it = inputs.find(b->name);
      if (it == inputs.end() || int64_t(it->second.size()) != b->num_elements()) {
        return InvalidArgumentError("interpret " + program.name + ": input " + b->name +
                                    " missing or of wrong size");
      }
      data = it->second;
    }
    storage.push_back({b, std::move(data), true});
    globals[b.get()] = &storage.back();
  }
  for (const Buffer& b : program.intermediates) {
    storage.push_back({b, std::vector<double>(b->num_elements(), NAN), true});
    globals[b.get()] = &storage.back();
  }
  for (const gpu::GpuKernel& kernel : program.kernels) {
    for (int64_t z = 0; z < kernel.grid[2]; ++z) {
      for (int64_t y = 0; y < kernel.grid[1]; ++y) {
        for (int64_t x = 0; x < kernel.grid[0]; ++x) {
          BlockRunner block(kernel, globals, {x, y, z}, options.check_races);
          TUNED_RETURN_IF_ERROR(block.Run().WithContext("interpret " + program.name));
        }
      }
    }
  }
  return globals[program.args.back().get()]->data;
}

}  // namespace tuned::lower

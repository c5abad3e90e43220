#include "tests/unit/worker/faulty_builder.h"

#include <chrono>
#include <thread>

#include "compiler/ir/ir.h"
#include "compiler/lower/pipeline.h"
#include "compiler/runtime/parallel.h"

namespace tuned::worker::testing {
namespace {

// Opaque to the optimiser, so the store below is a real access of address 0 rather than a
// trap instruction the compiler put in its place.
int* volatile null_pointer = nullptr;

void NullDereferenceKernel(void* const* /*args*/) { *null_pointer = 1; }

void MemoryHogKernel(void* const* /*args*/) {
  void* scratch = tuned_runtime_alloc(int64_t{64} << 30);
  tuned_runtime_free(scratch);
}

lower::LoweredFunc WithFault(lower::LoweredFunc func, Fault fault) {
  const ir::Buffer& output = func.args.back();
  std::vector<ir::Expr> origin(output->shape.size(), ir::MakeInt(0));
  switch (fault) {
    case Fault::kOutOfBoundsWrite: {
      std::vector<ir::Expr> far = origin;
      far[0] = ir::MakeInt(int64_t{1} << 40);
      func.body = ir::MakeSeq({func.body, ir::MakeStore(output, far, ir::MakeFloat(1))});
      break;
    }
    case Fault::kEndlessLoop:
      func.body = ir::MakeFor(ir::MakeVar("forever"), ir::MakeInt(0), ir::MakeInt(int64_t{1} << 62),
                              ir::ForKind::kSerial, func.body);
      break;
    case Fault::kWrongOutput:
      func.body = ir::MakeSeq({func.body, ir::MakeStore(output, origin, ir::MakeFloat(1000))});
      break;
    default:
      break;
  }
  return func;
}

class FaultyBuilder : public Builder {
 public:
  FaultyBuilder(std::shared_ptr<codegen::LlvmJit> jit, std::shared_ptr<FaultTable> faults)
      : jit_(std::move(jit)), faults_(std::move(faults)) {}

  StatusOr<BuiltKernel> Build(const std::shared_ptr<const ir::Workload>& workload,
                              const v1::MeasureJob& job) override {
    Fault fault;
    if (!faults_->Find(job.job_id(), &fault)) {
      TUNED_ASSIGN_OR_RETURN(lower::LoweredFunc func, lower::LowerTraceProto(workload, job.trace()));
      return CompileCandidate(*jit_, func);
    }
    switch (fault) {
      case Fault::kNullDereference:
        return BuiltKernel{nullptr, &NullDereferenceKernel};
      case Fault::kMemoryHog:
        return BuiltKernel{nullptr, &MemoryHogKernel};
      case Fault::kSlowBuild:
        std::this_thread::sleep_for(std::chrono::seconds(2));
        break;
      default:
        break;
    }
    TUNED_ASSIGN_OR_RETURN(lower::LoweredFunc func, lower::LowerTraceProto(workload, job.trace()));
    return CompileCandidate(*jit_, WithFault(std::move(func), fault));
  }

 private:
  std::shared_ptr<codegen::LlvmJit> jit_;
  std::shared_ptr<FaultTable> faults_;
};

}  // namespace

void FaultTable::Set(const std::string& job_id, Fault fault) {
  std::lock_guard lock(mu_);
  faults_[job_id] = fault;
}

bool FaultTable::Find(const std::string& job_id, Fault* fault) const {
  std::lock_guard lock(mu_);
  auto it = faults_.find(job_id);
  if (it == faults_.end()) return false;
  *fault = it->second;
  return true;
}

BuilderFactory FaultyBuilderFactory(std::shared_ptr<FaultTable> faults) {
  return [faults](std::shared_ptr<codegen::LlvmJit> jit) -> StatusOr<std::unique_ptr<Builder>> {
    return std::unique_ptr<Builder>(new FaultyBuilder(std::move(jit), faults));
  };
}

}  // namespace tuned::worker::testing

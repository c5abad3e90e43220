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

// The planted crashes stand for JIT-compiled kernels and for LLVM, neither of which a sanitizer
// build instruments: UBSan must not catch the store first, the process must die of SIGSEGV.
__attribute__((no_sanitize("undefined"))) void NullDereferenceKernel(void* const* /*args*/) {
  *null_pointer = 1;
}

// What a bug inside LLVM looks like to the worker: the build process dies of SIGSEGV.
__attribute__((no_sanitize("undefined"))) void CrashInsideTheBuild() { *null_pointer = 2; }

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
  explicit FaultyBuilder(std::shared_ptr<FaultTable> faults)
      : real_(MakeJitBuilder()), faults_(std::move(faults)) {}

  // Runs in the engine's build process, like the real Compile.
  StatusOr<CompiledCandidate> Compile(const std::shared_ptr<const ir::Workload>& workload,
                                      const v1::MeasureJob& job,
                                      const target::Target& target) override {
    Fault fault;
    if (!faults_->Find(job.job_id(), &fault)) return real_->Compile(workload, job, target);
    CompiledCandidate native;
    switch (fault) {
      case Fault::kNullDereference:
        native.native = &NullDereferenceKernel;
        return native;
      case Fault::kMemoryHog:
        native.native = &MemoryHogKernel;
        return native;
      case Fault::kSlowBuild:
        std::this_thread::sleep_for(std::chrono::seconds(2));
        break;
      case Fault::kHangingBuild:
        while (true) std::this_thread::sleep_for(std::chrono::seconds(1));
      case Fault::kCrashingBuild:
        CrashInsideTheBuild();
        break;
      default:
        break;
    }
    TUNED_ASSIGN_OR_RETURN(lower::LoweredFunc func, lower::LowerTraceProto(workload, job.trace()));
    return CompileToObject(WithFault(std::move(func), fault), target);
  }

 private:
  std::unique_ptr<Builder> real_;
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
  return [faults]() -> StatusOr<std::unique_ptr<Builder>> {
    return std::unique_ptr<Builder>(new FaultyBuilder(faults));
  };
}

}  // namespace tuned::worker::testing

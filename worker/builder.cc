#include "worker/builder.h"

#include "compiler/lower/lower.h"
#include "compiler/schedule/schedule.h"
#include "compiler/schedule/trace.h"

namespace tuned::worker {
namespace {

class JitBuilder : public Builder {
 public:
  explicit JitBuilder(std::shared_ptr<codegen::LlvmJit> jit) : jit_(std::move(jit)) {}

  StatusOr<BuiltKernel> Build(const std::shared_ptr<const ir::Workload>& workload,
                              const v1::MeasureJob& job) override {
    TUNED_ASSIGN_OR_RETURN(lower::LoweredFunc func, LowerCandidate(workload, job.trace()));
    return CompileCandidate(*jit_, func);
  }

 private:
  std::shared_ptr<codegen::LlvmJit> jit_;
};

}  // namespace

std::unique_ptr<Builder> MakeJitBuilder(std::shared_ptr<codegen::LlvmJit> jit) {
  return std::make_unique<JitBuilder>(std::move(jit));
}

StatusOr<lower::LoweredFunc> LowerCandidate(const std::shared_ptr<const ir::Workload>& workload,
                                            const v1::Trace& trace) {
  // An absent trace (the message's defaults: version 0, nothing in it) is the default schedule.
  schedule::Trace parsed;
  if (trace.version() != 0 || trace.instructions_size() > 0 || trace.decisions_size() > 0) {
    StatusOr<schedule::Trace> from_proto = schedule::TraceFromProto(trace);
    if (!from_proto.ok()) return from_proto.status().WithContext("invalid trace");
    parsed = std::move(from_proto).value();
  }
  StatusOr<schedule::Schedule> replayed = schedule::ReplayTrace(workload, parsed);
  if (!replayed.ok()) return replayed.status().WithContext("replay");
  StatusOr<lower::LoweredFunc> func = lower::Lower(*replayed, "kernel");
  if (!func.ok()) return func.status().WithContext("lowering");
  return std::move(func).value();
}

StatusOr<BuiltKernel> CompileCandidate(codegen::LlvmJit& jit, const lower::LoweredFunc& func) {
  StatusOr<std::unique_ptr<codegen::JitKernel>> kernel = jit.Compile(func);
  if (!kernel.ok()) return kernel.status().WithContext("code generation");
  BuiltKernel built;
  built.entry = (*kernel)->packed();
  built.kernel = std::shared_ptr<const codegen::JitKernel>(std::move(kernel).value());
  return built;
}

}  // namespace tuned::worker

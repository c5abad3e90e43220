#include "worker/builder.h"

#include "compiler/lower/pipeline.h"

namespace tuned::worker {
namespace {

class JitBuilder : public Builder {
 public:
  explicit JitBuilder(std::shared_ptr<codegen::LlvmJit> jit) : jit_(std::move(jit)) {}

  StatusOr<BuiltKernel> Build(const std::shared_ptr<const ir::Workload>& workload,
                              const v1::MeasureJob& job) override {
    TUNED_ASSIGN_OR_RETURN(lower::LoweredFunc func, lower::LowerTraceProto(workload, job.trace()));
    return CompileCandidate(*jit_, func);
  }

 private:
  std::shared_ptr<codegen::LlvmJit> jit_;
};

}  // namespace

std::unique_ptr<Builder> MakeJitBuilder(std::shared_ptr<codegen::LlvmJit> jit) {
  return std::make_unique<JitBuilder>(std::move(jit));
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

#include "worker/builder.h"

#include "common/sha256.h"
#include "compiler/codegen/llvm/codegen_llvm.h"
#include "compiler/lower/pipeline.h"
#include "proto/deterministic_bytes.h"

namespace tuned::worker {
namespace {

class JitBuilder : public Builder {
 public:
  StatusOr<CompiledCandidate> Compile(const std::shared_ptr<const ir::Workload>& workload,
                                      const v1::MeasureJob& job,
                                      const target::Target& target) override {
    TUNED_ASSIGN_OR_RETURN(lower::LoweredFunc func, lower::LowerTraceProto(workload, job.trace()));
    return CompileToObject(func, target);
  }

  // The object depends on the workload (which its canonical key names), the trace and the
  // target only (the code generator's version is this binary's).
  std::optional<std::string> CacheKey(const v1::MeasureJob& job,
                                      const target::Target& target) const override {
    std::string key;
    for (const std::string& part :
         {job.workload().key(), v1::DeterministicBytes(job.trace()), target.ToString()}) {
      key += std::to_string(part.size()) + ":" + part;  // lengths keep the parts apart
    }
    return Sha256Hex(key);
  }
};

}  // namespace

std::unique_ptr<Builder> MakeJitBuilder() { return std::make_unique<JitBuilder>(); }

StatusOr<CompiledCandidate> CompileToObject(const lower::LoweredFunc& func,
                                            const target::Target& target) {
  if (func.num_packed > kMaxPackedBuffers) {
    return InvalidArgumentError("code generation: " + std::to_string(func.num_packed) +
                                " packed buffers; at most " + std::to_string(kMaxPackedBuffers));
  }
  StatusOr<std::string> object = codegen::EmitObject({func}, target);
  if (!object.ok()) return object.status().WithContext("code generation");
  CompiledCandidate compiled;
  compiled.object = std::move(object).value();
  compiled.kernel_name = func.name;
  compiled.num_args = func.args.size();
  compiled.packed_bytes = func.PackedBytes();
  return compiled;
}

StatusOr<BuiltKernel> LinkCandidate(codegen::LlvmJit& jit, const CompiledCandidate& compiled) {
  if (compiled.native != nullptr) return BuiltKernel{nullptr, compiled.native, nullptr, {}};
  StatusOr<std::unique_ptr<codegen::JitKernel>> kernel =
      jit.Load(compiled.object, compiled.kernel_name, compiled.num_args, !compiled.packed_bytes.empty());
  if (!kernel.ok()) return kernel.status().WithContext("code generation");
  BuiltKernel built;
  built.entry = (*kernel)->packed();
  built.prepack = (*kernel)->prepack();
  built.packed_bytes = compiled.packed_bytes;
  built.kernel = std::shared_ptr<const codegen::JitKernel>(std::move(kernel).value());
  return built;
}

}  // namespace tuned::worker

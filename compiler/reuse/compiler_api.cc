// The public C++ API of include/tuned/compiler.h.

#include <chrono>

#include "compiler/codegen/llvm/llvm_jit.h"
#include "compiler/ir/op_library.h"
#include "compiler/reuse/apply_history_best.h"
#include "compiler/reuse/record_source.h"
#include "target/target.h"
#include "tuned/compiler.h"

namespace tuned {

Kernel::~Kernel() = default;

Status Kernel::Run(const std::vector<void*>& buffers) const { return jit_->Run(buffers); }

Compiler::~Compiler() = default;

StatusOr<std::unique_ptr<Compiler>> Compiler::Open(const Options& options) {
  TUNED_ASSIGN_OR_RETURN(auto source, reuse::OpenLocalRecordSource(options.db_path));
  return Open(options, std::move(source));
}

StatusOr<std::unique_ptr<Compiler>> Compiler::Open(const Options& options,
                                                   std::unique_ptr<reuse::RecordSource> source) {
  std::unique_ptr<Compiler> compiler(new Compiler());
  target::Target target;
  if (options.target.empty()) {
    TUNED_ASSIGN_OR_RETURN(target, codegen::HostCpuTarget());
  } else {
    TUNED_ASSIGN_OR_RETURN(target::Target parsed, target::ParseTarget(options.target));
    // Kernels of this API run in this process, on its CPU; a GPU program needs a launcher.
    if (parsed.kind != target::TargetKind::kLlvmCpu) {
      return UnimplementedError("target '" + options.target +
                                "': the compiler API builds CPU kernels only; `tuned compile --target ...` writes a "
                                "GPU target's program and its C launcher");
    }
    TUNED_ASSIGN_OR_RETURN(target, codegen::ParseCpuTarget(options.target));
  }
  TUNED_ASSIGN_OR_RETURN(compiler->jit_, codegen::LlvmJit::Create(target));
  compiler->source_ = std::move(source);
  compiler->options_ = options;
  compiler->target_ = target.ToString();
  return compiler;
}

StatusOr<std::shared_ptr<const Kernel>> Compiler::GetKernel(const std::string& workload_spec) {
  auto start = std::chrono::steady_clock::now();
  TUNED_ASSIGN_OR_RETURN(ir::Workload workload, ir::ParseWorkloadSpec(workload_spec));
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto it = cache_.find(workload.key()); it != cache_.end()) {
    ++stats_.cache_hits;
    return it->second;
  }
  reuse::SelectOptions select;
  select.target = target_;
  select.allow_compatible_target = options_.allow_compatible_target;
  select.function_name = "tuned_kernel";
  TUNED_ASSIGN_OR_RETURN(reuse::Selection selection, reuse::SelectKernel(workload, *source_, select));
  std::shared_ptr<Kernel> kernel(new Kernel());
  TUNED_ASSIGN_OR_RETURN(kernel->jit_, jit_->Compile(selection.func));
  kernel->workload_key_ = workload.key();
  kernel->from_record_ = selection.from_record;
  kernel->record_id_ = selection.record_id;
  kernel->trace_hash_ = selection.trace_hash;
  kernel->fallback_reason_ = selection.fallback_reason;
  kernel->warnings_ = selection.warnings;
  kernel->build_ms_ =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  ++(selection.from_record ? stats_.record_hits : stats_.fallbacks);
  cache_[workload.key()] = kernel;
  return std::shared_ptr<const Kernel>(kernel);
}

Compiler::Stats Compiler::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

}  // namespace tuned

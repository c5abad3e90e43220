// The public C++ API of include/tuned/compiler.h.

#include <chrono>

#include "compiler/codegen/gpu/gpu_candidate.h"
#include "compiler/codegen/llvm/llvm_jit.h"
#include "compiler/ir/op_library.h"
#include "compiler/reuse/apply_history_best.h"
#include "compiler/reuse/gpu/emit_gpu_library.h"
#include "compiler/reuse/record_source.h"
#include "compiler/runtime/packed_constants.h"
#include "compiler/runtime/parallel.h"
#include "target/target.h"
#include "tuned/compiler.h"

namespace tuned {

Kernel::Kernel() = default;
Kernel::~Kernel() = default;

Status Kernel::Run(const std::vector<void*>& buffers) const {
  if (!packed_) return jit_->Run(buffers);
  if (buffers.size() != num_inputs_ + 1) {
    return InvalidArgumentError("kernel " + jit_->name() + " takes " + std::to_string(num_inputs_ + 1) +
                                " buffers (inputs, then the output), got " + std::to_string(buffers.size()));
  }
  for (size_t i = 0; i < buffers.size(); ++i) {
    if (reinterpret_cast<uintptr_t>(buffers[i]) % runtime::kBufferAlignment != 0) {
      return InvalidArgumentError("kernel " + jit_->name() + ": argument " + std::to_string(i) + " is not 64-byte aligned");
    }
  }
  return jit_->Run(packed_->Arguments(buffers));
}

GpuKernel::~GpuKernel() = default;

const std::string& GpuKernel::program() const {
  return selection_->target.kind == target::TargetKind::kCuda ? selection_->program.binary()
                                                               : selection_->program.source();
}

int64_t GpuKernel::record_id() const { return selection_->record_id; }
const std::string& GpuKernel::trace_hash() const { return selection_->trace_hash; }
double GpuKernel::median_seconds() const { return selection_->median_seconds; }
const std::vector<std::string>& GpuKernel::warnings() const { return selection_->warnings; }

StatusOr<GpuKernel::Files> GpuKernel::WriteLauncher(const std::string& output, const std::string& name) const {
  TUNED_ASSIGN_OR_RETURN(reuse::GpuLibraryFiles files, reuse::EmitGpuLibrary(*selection_, output, name));
  return Files{.program = files.program_path, .launcher = files.launcher_path, .header = files.header_path};
}

Compiler::~Compiler() = default;

namespace {

double MillisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// The public description of a built program's launches.
std::vector<GpuLaunch> LaunchesOf(const v1::GpuCandidateProgram& program) {
  std::vector<GpuLaunch> launches;
  for (const v1::GpuKernelLaunch& launch : program.launches()) {
    GpuLaunch out;
    out.function = launch.function();
    for (int d = 0; d < 3; ++d) {
      out.grid[size_t(d)] = launch.grid(d);
      out.block[size_t(d)] = launch.block(d);
    }
    out.buffers.assign(launch.buffers().begin(), launch.buffers().end());
    for (const v1::KernelResourceUsage& usage : program.kernels()) {
      if (usage.function() == launch.function()) out.registers = int(usage.registers());
    }
    launches.push_back(std::move(out));
  }
  return launches;
}

}  // namespace

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
    if (parsed.kind != target::TargetKind::kLlvmCpu) {
      TUNED_RETURN_IF_ERROR(codegen::gpu::CheckGpuTarget(parsed));
      compiler->gpu_target_ = std::make_unique<target::Target>(parsed);
      target = parsed;
    } else {
      TUNED_ASSIGN_OR_RETURN(target, codegen::ParseCpuTarget(options.target));
    }
  }
  if (compiler->gpu_target_ == nullptr) {
    TUNED_ASSIGN_OR_RETURN(compiler->jit_, codegen::LlvmJit::Create(target));
  }
  compiler->source_ = std::move(source);
  compiler->options_ = options;
  compiler->target_ = target.ToString();
  return compiler;
}

StatusOr<std::shared_ptr<const Kernel>> Compiler::GetKernel(const std::string& workload_spec) {
  auto start = std::chrono::steady_clock::now();
  if (gpu_target_ != nullptr) {
    return FailedPreconditionError("target '" + target_ + "' is a GPU target: GetGpuKernel gives its program");
  }
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
  if (selection.func.prepack.defined()) {
    const lower::LoweredFunc& func = selection.func;
    kernel->num_inputs_ = func.num_inputs();
    kernel->packed_ = std::make_unique<runtime::PackedConstants>(kernel->jit_->prepack(), workload.ConstantInputFlags(),
                                                                 func.PackedBytes());
  }
  kernel->workload_key_ = workload.key();
  kernel->from_record_ = selection.from_record;
  kernel->record_id_ = selection.record_id;
  kernel->trace_hash_ = selection.trace_hash;
  kernel->fallback_reason_ = selection.fallback_reason;
  kernel->warnings_ = selection.warnings;
  kernel->build_ms_ = MillisecondsSince(start);
  ++(selection.from_record ? stats_.record_hits : stats_.fallbacks);
  cache_[workload.key()] = kernel;
  return std::shared_ptr<const Kernel>(kernel);
}

StatusOr<std::shared_ptr<const GpuKernel>> Compiler::GetGpuKernel(const std::string& workload_spec) {
  auto start = std::chrono::steady_clock::now();
  if (gpu_target_ == nullptr) {
    return FailedPreconditionError("target '" + target_ + "' is a CPU target: GetKernel gives its kernel");
  }
  TUNED_ASSIGN_OR_RETURN(ir::Workload workload, ir::ParseWorkloadSpec(workload_spec));
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto it = gpu_cache_.find(workload.key()); it != gpu_cache_.end()) {
    ++stats_.cache_hits;
    return it->second;
  }
  TUNED_ASSIGN_OR_RETURN(reuse::GpuSelection selection, reuse::SelectGpuProgram(workload, *gpu_target_, *source_));
  std::shared_ptr<GpuKernel> kernel(new GpuKernel());
  kernel->workload_key_ = workload.key();
  kernel->target_ = target_;
  kernel->launches_ = LaunchesOf(selection.program);
  kernel->intermediate_bytes_.assign(selection.program.intermediate_bytes().begin(),
                                     selection.program.intermediate_bytes().end());
  kernel->selection_ = std::make_unique<reuse::GpuSelection>(std::move(selection));
  kernel->build_ms_ = MillisecondsSince(start);
  ++stats_.record_hits;
  gpu_cache_[workload.key()] = kernel;
  return std::shared_ptr<const GpuKernel>(kernel);
}

Compiler::Stats Compiler::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

}  // namespace tuned

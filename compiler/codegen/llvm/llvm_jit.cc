#include "compiler/codegen/llvm/llvm_jit.h"

#include <atomic>
#include <chrono>
#include <cstdint>

#include <llvm/ExecutionEngine/JITSymbol.h>
#include <llvm/ExecutionEngine/Orc/Core.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/TargetParser/Triple.h>

#include "common/logging.h"
#include "compiler/codegen/llvm/llvm_internal.h"
#include "compiler/runtime/parallel.h"

namespace tuned::codegen {

struct LlvmJit::Session {
  std::unique_ptr<llvm::orc::LLJIT> jit;
  std::atomic<uint64_t> next_dylib{0};
};

struct JitKernel::Owner {
  std::shared_ptr<LlvmJit::Session> session;
  llvm::orc::JITDylib* dylib = nullptr;

  ~Owner() {
    if (dylib == nullptr) return;
    llvm::Error error = session->jit->getExecutionSession().removeJITDylib(*dylib);
    Status status = internal::ToStatus(std::move(error), "releasing a jit kernel");
    if (!status.ok()) Logger("codegen")->warn("{}", status.message());
  }
};

namespace {

using Clock = std::chrono::steady_clock;

double MillisecondsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

template <typename Fn>
std::pair<llvm::orc::SymbolStringPtr, llvm::JITEvaluatedSymbol> RuntimeSymbol(
    llvm::orc::LLJIT& jit, const char* name, Fn* fn) {
  return {jit.mangleAndIntern(name),
          llvm::JITEvaluatedSymbol(llvm::pointerToJITTargetAddress(fn),
                                   llvm::JITSymbolFlags::Exported)};
}

}  // namespace

JitKernel::~JitKernel() = default;

Status JitKernel::Run(const std::vector<void*>& args) const {
  if (args.size() != num_args_) {
    return InvalidArgumentError("kernel " + name_ + " takes " + std::to_string(num_args_) +
                                " buffers, got " + std::to_string(args.size()));
  }
  for (size_t i = 0; i < args.size(); ++i) {
    if (reinterpret_cast<uintptr_t>(args[i]) % runtime::kBufferAlignment != 0) {
      return InvalidArgumentError("kernel " + name_ + ": argument " + std::to_string(i) +
                                  " is not 64-byte aligned");
    }
  }
  packed_(args.data());
  return Status::Ok();
}

LlvmJit::LlvmJit(target::Target target, CodegenOptions options, std::shared_ptr<Session> session)
    : target_(std::move(target)), options_(options), session_(std::move(session)) {}

LlvmJit::~LlvmJit() = default;

StatusOr<std::unique_ptr<LlvmJit>> LlvmJit::Create(const target::Target& target,
                                                   const CodegenOptions& options) {
  internal::InitializeLlvm();
  TUNED_RETURN_IF_ERROR(CheckRunnableOnHost(target));
  llvm::orc::JITTargetMachineBuilder machine{llvm::Triple(LlvmTriple(target))};
  machine.setCPU(target.cpu);
  machine.addFeatures(target.features);
  machine.setCodeGenOptLevel(llvm::CodeGenOpt::Aggressive);
  machine.getOptions().AllowFPOpFusion = llvm::FPOpFusion::Standard;
  TUNED_ASSIGN_OR_RETURN(
      std::unique_ptr<llvm::orc::LLJIT> jit,
      internal::ToStatusOr(llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(machine).create(),
                           "creating the jit for '" + target.ToString() + "'"));
  // Generated code calls libm (expf, tanhf, ...) from the process and the runtime directly.
  llvm::orc::JITDylib& main = jit->getMainJITDylib();
  TUNED_ASSIGN_OR_RETURN(
      auto process_symbols,
      internal::ToStatusOr(llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
                               jit->getDataLayout().getGlobalPrefix()),
                           "exposing process symbols to the jit"));
  main.addGenerator(std::move(process_symbols));
  llvm::orc::SymbolMap runtime_symbols;
  runtime_symbols.insert(RuntimeSymbol(*jit, "tuned_parallel_for", &tuned_parallel_for));
  runtime_symbols.insert(RuntimeSymbol(*jit, "tuned_runtime_alloc", &tuned_runtime_alloc));
  runtime_symbols.insert(RuntimeSymbol(*jit, "tuned_runtime_free", &tuned_runtime_free));
  TUNED_RETURN_IF_ERROR(internal::ToStatus(
      main.define(llvm::orc::absoluteSymbols(std::move(runtime_symbols))),
      "defining runtime symbols in the jit"));
  auto session = std::make_shared<Session>();
  session->jit = std::move(jit);
  return std::unique_ptr<LlvmJit>(new LlvmJit(target, options, std::move(session)));
}

StatusOr<std::unique_ptr<JitKernel>> LlvmJit::Compile(const lower::LoweredFunc& func) {
  std::lock_guard<std::mutex> lock(compile_mutex_);
  CompileStats stats;
  Clock::time_point start = Clock::now();
  auto context = std::make_unique<llvm::LLVMContext>();
  TUNED_ASSIGN_OR_RETURN(std::unique_ptr<llvm::Module> module,
                         internal::BuildModule(*context, {func}, target_, options_));
  stats.codegen_ms = MillisecondsSince(start);

  start = Clock::now();
  TUNED_ASSIGN_OR_RETURN(std::unique_ptr<llvm::TargetMachine> tm,
                         internal::CreateTargetMachine(target_));
  internal::OptimizeModule(*module, *tm);
  stats.optimize_ms = MillisecondsSince(start);

  start = Clock::now();
  llvm::orc::LLJIT& jit = *session_->jit;
  const std::string where = "jit compile of kernel " + func.name;
  TUNED_ASSIGN_OR_RETURN(std::shared_ptr<JitKernel::Owner> owner, NewKernelDylib(where));
  TUNED_RETURN_IF_ERROR(internal::ToStatus(
      jit.addIRModule(*owner->dylib,
                      llvm::orc::ThreadSafeModule(std::move(module), std::move(context))),
      where));
  TUNED_ASSIGN_OR_RETURN(std::unique_ptr<JitKernel> kernel,
                         Entries(std::move(owner), func.name, func.args.size(), func.prepack.defined(), where));
  stats.machine_code_ms = MillisecondsSince(start);
  kernel->stats_ = stats;
  return kernel;
}


StatusOr<std::shared_ptr<JitKernel::Owner>> LlvmJit::NewKernelDylib(const std::string& where) {
  llvm::orc::LLJIT& jit = *session_->jit;
  llvm::Expected<llvm::orc::JITDylib&> created =
      jit.createJITDylib("kernel" + std::to_string(session_->next_dylib++));
  if (!created) return internal::ToStatus(created.takeError(), where);
  auto owner = std::make_shared<JitKernel::Owner>();
  owner->session = session_;
  owner->dylib = &*created;
  owner->dylib->addToLinkOrder(jit.getMainJITDylib());
  return owner;
}

StatusOr<std::unique_ptr<JitKernel>> LlvmJit::Entries(std::shared_ptr<JitKernel::Owner> owner,
                                                      const std::string& name, size_t num_args,
                                                      bool has_prepack, const std::string& where) {
  llvm::orc::LLJIT& jit = *session_->jit;
  TUNED_ASSIGN_OR_RETURN(llvm::orc::ExecutorAddr entry,
                         internal::ToStatusOr(jit.lookup(*owner->dylib, PackedName(name)), where));
  std::unique_ptr<JitKernel> kernel(new JitKernel());
  kernel->packed_ = entry.toPtr<JitKernel::PackedFn>();
  if (has_prepack) {
    TUNED_ASSIGN_OR_RETURN(
        llvm::orc::ExecutorAddr prepack,
        internal::ToStatusOr(jit.lookup(*owner->dylib, PackedName(lower::PrepackName(name))), where));
    kernel->prepack_ = prepack.toPtr<JitKernel::PackedFn>();
  }
  kernel->owner_ = std::move(owner);
  kernel->name_ = name;
  kernel->num_args_ = num_args;
  return kernel;
}

StatusOr<std::unique_ptr<JitKernel>> LlvmJit::Load(std::string_view object, const std::string& name,
                                                   size_t num_args, bool has_prepack) {
  std::lock_guard<std::mutex> lock(compile_mutex_);
  CompileStats stats;
  const Clock::time_point start = Clock::now();
  llvm::orc::LLJIT& jit = *session_->jit;
  const std::string where = "linking the object of kernel " + name;
  TUNED_ASSIGN_OR_RETURN(std::shared_ptr<JitKernel::Owner> owner, NewKernelDylib(where));
  TUNED_RETURN_IF_ERROR(internal::ToStatus(
      jit.addObjectFile(*owner->dylib, llvm::MemoryBuffer::getMemBufferCopy(
                                           llvm::StringRef(object.data(), object.size()), name)),
      where));
  TUNED_ASSIGN_OR_RETURN(std::unique_ptr<JitKernel> kernel,
                         Entries(std::move(owner), name, num_args, has_prepack, where));
  stats.machine_code_ms = MillisecondsSince(start);
  kernel->stats_ = stats;
  return kernel;
}

}  // namespace tuned::codegen

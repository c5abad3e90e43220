#include "compiler/codegen/llvm/llvm_internal.h"

#include <mutex>
#include <optional>

#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/IR/PassManager.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/OptimizationLevel.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Target/TargetOptions.h>

namespace tuned::codegen::internal {

void InitializeLlvm() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeAllTargetInfos();
    llvm::InitializeAllTargets();
    llvm::InitializeAllTargetMCs();
    llvm::InitializeAllAsmPrinters();
    llvm::InitializeAllAsmParsers();
  });
}

Status ToStatus(llvm::Error error, std::string_view context, StatusCode code) {
  if (!error) return Status::Ok();
  std::string message = llvm::toString(std::move(error));
  return Status(code, std::string(context) + ": " + message);
}

StatusOr<std::unique_ptr<llvm::TargetMachine>> CreateTargetMachine(const target::Target& target) {
  InitializeLlvm();
  if (target.kind != target::TargetKind::kLlvmCpu) {
    return InvalidArgumentError("target '" + target.ToString() + "' is not an LLVM CPU target");
  }
  const std::string triple = LlvmTriple(target);
  std::string error;
  const llvm::Target* llvm_target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (llvm_target == nullptr) {
    return InvalidArgumentError("target '" + target.ToString() + "': " + error);
  }
  llvm::TargetOptions options;
  // Contract only what the IR asks for (llvm.fmuladd); plain fmul + fadd stay two roundings.
  options.AllowFPOpFusion = llvm::FPOpFusion::Standard;
  std::unique_ptr<llvm::TargetMachine> tm(llvm_target->createTargetMachine(
      triple, target.cpu, target.FeatureString(), options, llvm::Reloc::PIC_,
      std::nullopt, llvm::CodeGenOpt::Aggressive));
  if (!tm) return InternalError("target '" + target.ToString() + "': no target machine");
  return tm;
}

void OptimizeModule(llvm::Module& module, llvm::TargetMachine& tm) {
  module.setTargetTriple(tm.getTargetTriple().str());
  module.setDataLayout(tm.createDataLayout());
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions tuning;
  tuning.LoopVectorization = true;
  tuning.SLPVectorization = true;
  // Full unrolling then drops all of ScalarEvolution's cache instead of invalidating it loop by
  // loop, which on our many-loop kernels (border partitions) is what builds spent their time on:
  // the same object, 10-45% less optimisation time (docs/codegen_llvm.md).
  tuning.ForgetAllSCEVInLoopUnroll = true;
  llvm::PassBuilder builder(&tm, tuning);
  builder.registerModuleAnalyses(mam);
  builder.registerCGSCCAnalyses(cgam);
  builder.registerFunctionAnalyses(fam);
  builder.registerLoopAnalyses(lam);
  builder.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager passes =
      builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
  passes.run(module, mam);
}

}  // namespace tuned::codegen::internal

#ifndef TUNED_COMPILER_CODEGEN_LLVM_LLVM_INTERNAL_H_
#define TUNED_COMPILER_CODEGEN_LLVM_LLVM_INTERNAL_H_

/// \file
/// Private to compiler/codegen/llvm (included only by its .cc files, never by a public header):
/// the one place llvm::Error becomes a tuned::Status, target-machine construction, and the O3
/// pipeline shared by the JIT and object emission.

#include <memory>
#include <string>
#include <string_view>

#include <llvm/IR/Module.h>
#include <llvm/Support/Error.h>
#include <llvm/Target/TargetMachine.h>

#include "common/status.h"
#include "compiler/codegen/llvm/codegen_llvm.h"
#include "compiler/codegen/llvm/cpu_target.h"
#include "compiler/lower/lowered_func.h"

namespace tuned::codegen::internal {

/// Registers every LLVM target once per process (cross builds need all of them).
void InitializeLlvm();

/// Converts an llvm::Error (consuming it) into a Status with `context` prefixed; OK for success.
Status ToStatus(llvm::Error error, std::string_view context, StatusCode code = StatusCode::kInternal);

template <typename T>
StatusOr<T> ToStatusOr(llvm::Expected<T> value, std::string_view context,
                       StatusCode code = StatusCode::kInternal) {
  if (!value) return ToStatus(value.takeError(), context, code);
  return std::move(*value);
}

/// A target machine for `target` at -O3, position-independent (so objects can go into a .so).
StatusOr<std::unique_ptr<llvm::TargetMachine>> CreateTargetMachine(const target::Target& target);

/// Translates `funcs` into a new module in `context` (not yet optimised; see codegen_llvm.h for
/// the rules). Errors name the kernel and what is wrong with it.
StatusOr<std::unique_ptr<llvm::Module>> BuildModule(llvm::LLVMContext& context,
                                                    const std::vector<lower::LoweredFunc>& funcs,
                                                    const target::Target& target,
                                                    const CodegenOptions& options);

/// Sets the module's triple and data layout from `tm` and runs LLVM's default O3 pipeline.
void OptimizeModule(llvm::Module& module, llvm::TargetMachine& tm);

}  // namespace tuned::codegen::internal

#endif  // TUNED_COMPILER_CODEGEN_LLVM_LLVM_INTERNAL_H_

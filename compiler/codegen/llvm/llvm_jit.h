#ifndef TUNED_COMPILER_CODEGEN_LLVM_LLVM_JIT_H_
#define TUNED_COMPILER_CODEGEN_LLVM_LLVM_JIT_H_

/// \file
/// In-process compilation of lowered programs into callable kernels (LLVM ORC LLJIT). The
/// search compiles thousands of candidates, so every compile reports where its time went.
///
///   TUNED_ASSIGN_OR_RETURN(auto jit, LlvmJit::Create(target));
///   TUNED_ASSIGN_OR_RETURN(auto kernel, jit->Compile(func));
///   TUNED_RETURN_IF_ERROR(kernel->Run({a.data(), b.data(), c.data()}));
///
/// Each kernel lives in its own JIT dylib and its machine code is freed when the JitKernel is
/// destroyed; a kernel keeps its LlvmJit's session alive, so either may be destroyed first.
/// The kernel ABI is the one documented in codegen_llvm.h.

#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "compiler/codegen/llvm/codegen_llvm.h"
#include "compiler/codegen/llvm/cpu_target.h"
#include "compiler/lower/lowered_func.h"

namespace tuned::codegen {

/// Wall-clock time of one compile, by phase, in milliseconds.
struct CompileStats {
  double codegen_ms = 0;       // LoweredFunc -> LLVM IR (and verification)
  double optimize_ms = 0;      // the O3 pipeline
  double machine_code_ms = 0;  // instruction selection, register allocation, JIT linking
  double total_ms() const { return codegen_ms + optimize_ms + machine_code_ms; }
};

class JitKernel {
 public:
  using PackedFn = void (*)(void* const* args);

  ~JitKernel();
  JitKernel(const JitKernel&) = delete;
  JitKernel& operator=(const JitKernel&) = delete;

  const std::string& name() const { return name_; }
  size_t num_args() const { return num_args_; }
  /// The `<name>_packed` entry point: args[i] points to argument i.
  PackedFn packed() const { return packed_; }
  /// The prepack entry (`<name>_prepack_packed`, the same arguments), or null when the kernel
  /// has no packed buffers (lower::LoweredFunc::prepack): call it once before the kernel.
  PackedFn prepack() const { return prepack_; }
  /// Runs the kernel after checking the argument count and the 64-byte alignment.
  Status Run(const std::vector<void*>& args) const;
  const CompileStats& stats() const { return stats_; }

 private:
  friend class LlvmJit;
  struct Owner;
  JitKernel() = default;

  std::shared_ptr<Owner> owner_;  // the JIT session and this kernel's dylib
  std::string name_;
  size_t num_args_ = 0;
  PackedFn packed_ = nullptr;
  PackedFn prepack_ = nullptr;
  CompileStats stats_;
};

class LlvmJit {
 public:
  /// A JIT for `target`, which must be runnable on this host (CheckRunnableOnHost).
  static StatusOr<std::unique_ptr<LlvmJit>> Create(const target::Target& target,
                                                   const CodegenOptions& options = {});
  ~LlvmJit();

  /// Compiles one kernel. Thread-safe, but compiles on one LlvmJit run one at a time (LLJIT's
  /// default compiler shares one target machine); parallel builders use one LlvmJit each.
  StatusOr<std::unique_ptr<JitKernel>> Compile(const lower::LoweredFunc& func);

  /// Links `object`, a relocatable object file of kernel `name` with `num_args` buffers built
  /// for this JIT's target (EmitObject's output, possibly made in another process), and
  /// returns it like Compile; `has_prepack`: it defines the kernel's prepack entry too. Its
  /// stats hold only machine_code_ms (the link).
  StatusOr<std::unique_ptr<JitKernel>> Load(std::string_view object, const std::string& name,
                                            size_t num_args, bool has_prepack = false);

  const target::Target& target() const { return target_; }

 private:
  /// The kernel in `owner`'s dylib: its packed entry and, with `has_prepack`, its prepack entry.
  StatusOr<std::unique_ptr<JitKernel>> Entries(std::shared_ptr<JitKernel::Owner> owner, const std::string& name,
                                               size_t num_args, bool has_prepack, const std::string& where);
  /// A fresh dylib for one kernel, linked against the main dylib (process and runtime symbols).
  StatusOr<std::shared_ptr<JitKernel::Owner>> NewKernelDylib(const std::string& where);
  friend class JitKernel;
  struct Session;
  LlvmJit(target::Target target, CodegenOptions options, std::shared_ptr<Session> session);

  target::Target target_;
  CodegenOptions options_;
  std::shared_ptr<Session> session_;
  std::mutex compile_mutex_;
};

}  // namespace tuned::codegen

#endif  // TUNED_COMPILER_CODEGEN_LLVM_LLVM_JIT_H_

#ifndef TUNED_MODEL_COMPILED_KERNELS_H_
#define TUNED_MODEL_COMPILED_KERNELS_H_

/// \file
/// The kernels of a library `tuned compile --model` wrote, as a kernel executor for RunModel on
/// float32 values: the library is loaded with dlopen and each kernel called through its packed
/// entry point (`<name>_packed(void* const* args)`, compiler/codegen/llvm/codegen_llvm.h) on the
/// run's own aligned values, so nothing is copied or converted around a call. The time spent
/// inside the kernels is counted apart from the rest of the run.

#include <map>
#include <memory>
#include <string>

#include "common/status.h"
#include "model/model_runner.h"

namespace tuned::model {

class CompiledKernels {
 public:
  /// `packed_symbols`: workload key → packed entry point, for every task of the model.
  static StatusOr<std::unique_ptr<CompiledKernels>> Open(const std::string& library_path, const ModelTasks& tasks,
                                                         const std::map<std::string, std::string>& packed_symbols);
  ~CompiledKernels();
  CompiledKernels(const CompiledKernels&) = delete;
  CompiledKernels& operator=(const CompiledKernels&) = delete;

  /// Runs kernels of this library; it must outlive the executor.
  KernelExecutorOf<Float32Values> executor();
  /// Seconds spent inside kernels since the last reset.
  double kernel_seconds() const { return kernel_seconds_; }
  void reset_kernel_seconds() { kernel_seconds_ = 0; }

 private:
  CompiledKernels() = default;
  StatusOr<Float32Values> Run(const KernelDefinition& kernel, const std::vector<const Float32Values*>& inputs);

  void* handle_ = nullptr;
  std::map<std::string, void (*)(void* const*)> packed_;  // by workload key
  double kernel_seconds_ = 0;
};

}  // namespace tuned::model

#endif  // TUNED_MODEL_COMPILED_KERNELS_H_

#ifndef TUNED_MODEL_COMPILED_KERNELS_H_
#define TUNED_MODEL_COMPILED_KERNELS_H_

/// \file
/// The kernels of a library `tuned compile --model` wrote, as a kernel executor for RunModel on
/// float32 values: the library is loaded with dlopen and each kernel called through its packed
/// entry point (`<name>_packed(void* const* args)`, compiler/codegen/llvm/codegen_llvm.h) on the
/// run's own aligned values, so nothing is copied or converted around a call. The time spent
/// inside the kernels is counted apart from the rest of the run. A kernel with packed buffers
/// (a weight laid out by its schedule) gets them from its prepack entry at its first call with
/// each set of constant inputs, outside the kernel time, as an engine packs weights at load.

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "compiler/runtime/packed_constants.h"

#include "common/status.h"
#include "model/model_runner.h"

namespace tuned::model {

class CompiledKernels {
 public:
  /// A kernel's entry points, as the manifest names them.
  struct Entry {
    std::string packed;                  // `<name>_packed`
    std::string prepack;                 // `<name>_prepack_packed`, or empty
    std::vector<uint64_t> packed_bytes;  // its packed buffers' sizes
  };
  /// `entries`: workload key → entry points, for every task of the model.
  static StatusOr<std::unique_ptr<CompiledKernels>> Open(const std::string& library_path, const ModelTasks& tasks,
                                                         const std::map<std::string, Entry>& entries);
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

  using Fn = void (*)(void* const*);
  struct Kernel {
    Fn packed = nullptr;
    std::unique_ptr<runtime::PackedConstants> constants;  // null: no packed buffers
  };
  StatusOr<Fn> Symbol(const std::string& library_path, const std::string& name) const;

  void* handle_ = nullptr;
  std::map<std::string, Kernel> kernels_;  // by workload key
  double kernel_seconds_ = 0;
};

}  // namespace tuned::model

#endif  // TUNED_MODEL_COMPILED_KERNELS_H_

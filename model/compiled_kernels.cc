#include "model/compiled_kernels.h"

#include <dlfcn.h>

#include <chrono>

namespace tuned::model {

StatusOr<CompiledKernels::Fn> CompiledKernels::Symbol(const std::string& library_path, const std::string& name) const {
  void* fn = dlsym(handle_, name.c_str());
  if (fn == nullptr) return InvalidArgumentError("library '" + library_path + "' has no symbol '" + name + "'");
  return reinterpret_cast<Fn>(fn);
}

StatusOr<std::unique_ptr<CompiledKernels>> CompiledKernels::Open(const std::string& library_path, const ModelTasks& tasks,
                                                                const std::map<std::string, Entry>& entries) {
  std::unique_ptr<CompiledKernels> kernels(new CompiledKernels());
  kernels->handle_ = dlopen(library_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (kernels->handle_ == nullptr) return NotFoundError("library '" + library_path + "': " + dlerror());
  for (const Task& task : tasks.tasks) {
    const std::string& key = task.workload->key();
    auto entry = entries.find(key);
    if (entry == entries.end()) {
      return InvalidArgumentError("library '" + library_path + "' has no kernel for the task " + task.ops + " " +
                                  task.shape + "; expected a library compiled from this model (tuned compile --model)");
    }
    Kernel& kernel = kernels->kernels_[key];
    TUNED_ASSIGN_OR_RETURN(kernel.packed, kernels->Symbol(library_path, entry->second.packed));
    if (!entry->second.prepack.empty()) {
      TUNED_ASSIGN_OR_RETURN(Fn prepack, kernels->Symbol(library_path, entry->second.prepack));
      kernel.constants = std::make_unique<runtime::PackedConstants>(prepack, task.workload->ConstantInputFlags(),
                                                                    entry->second.packed_bytes);
    }
  }
  return kernels;
}

CompiledKernels::~CompiledKernels() {
  kernels_.clear();  // the packed buffers, before the code that filled them goes
  if (handle_ != nullptr) dlclose(handle_);
}

KernelExecutorOf<Float32Values> CompiledKernels::executor() {
  return [this](const KernelDefinition& kernel, const std::vector<const Float32Values*>& inputs) {
    return Run(kernel, inputs);
  };
}

StatusOr<Float32Values> CompiledKernels::Run(const KernelDefinition& kernel,
                                            const std::vector<const Float32Values*>& inputs) {
  Kernel& compiled = kernels_.at(kernel.workload->key());
  Float32Values output(size_t(kernel.workload->output_stage().output->num_elements()));
  std::vector<void*> args;
  // The entry point takes void* const*; kernels never write their inputs.
  for (const Float32Values* in : inputs) args.push_back(const_cast<float*>(in->data()));
  args.push_back(output.data());
  if (compiled.constants) args = compiled.constants->Arguments(args);  // packs a new weight here
  const auto start = std::chrono::steady_clock::now();
  compiled.packed(args.data());
  kernel_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return output;
}

}  // namespace tuned::model

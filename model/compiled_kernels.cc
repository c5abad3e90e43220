#include "model/compiled_kernels.h"

#include <dlfcn.h>

#include <chrono>

namespace tuned::model {

StatusOr<std::unique_ptr<CompiledKernels>> CompiledKernels::Open(
    const std::string& library_path, const ModelTasks& tasks, const std::map<std::string, std::string>& packed_symbols) {
  std::unique_ptr<CompiledKernels> kernels(new CompiledKernels());
  kernels->handle_ = dlopen(library_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (kernels->handle_ == nullptr) return NotFoundError("library '" + library_path + "': " + dlerror());
  for (const Task& task : tasks.tasks) {
    const std::string& key = task.workload->key();
    auto symbol = packed_symbols.find(key);
    if (symbol == packed_symbols.end()) {
      return InvalidArgumentError("library '" + library_path + "' has no kernel for the task " + task.ops + " " +
                                  task.shape + "; expected a library compiled from this model (tuned compile --model)");
    }
    void* fn = dlsym(kernels->handle_, symbol->second.c_str());
    if (fn == nullptr) {
      return InvalidArgumentError("library '" + library_path + "' has no symbol '" + symbol->second + "'");
    }
    kernels->packed_[key] = reinterpret_cast<void (*)(void* const*)>(fn);
  }
  return kernels;
}

CompiledKernels::~CompiledKernels() {
  if (handle_ != nullptr) dlclose(handle_);
}

KernelExecutorOf<Float32Values> CompiledKernels::executor() {
  return [this](const KernelDefinition& kernel, const std::vector<const Float32Values*>& inputs) {
    return Run(kernel, inputs);
  };
}

StatusOr<Float32Values> CompiledKernels::Run(const KernelDefinition& kernel,
                                            const std::vector<const Float32Values*>& inputs) {
  Float32Values output(size_t(kernel.workload->output_stage().output->num_elements()));
  std::vector<void*> args;
  // The entry point takes void* const*; kernels never write their inputs.
  for (const Float32Values* in : inputs) args.push_back(const_cast<float*>(in->data()));
  args.push_back(output.data());
  const auto start = std::chrono::steady_clock::now();
  packed_.at(kernel.workload->key())(args.data());
  kernel_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return output;
}

}  // namespace tuned::model

#include "model/compiled_kernels.h"

#include <dlfcn.h>

#include <chrono>
#include <cstdlib>

namespace tuned::model {

// float32 values aligned to 64 bytes, as generated kernels assume.
struct CompiledKernels::Buffer {
  explicit Buffer(size_t n) : size(n), data(static_cast<float*>(std::aligned_alloc(64, (n * sizeof(float) + 63) / 64 * 64))) {}
  ~Buffer() { std::free(data); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  static std::shared_ptr<Buffer> Of(const std::vector<double>& values) {
    auto b = std::make_shared<Buffer>(values.size());
    for (size_t i = 0; i < values.size(); ++i) b->data[i] = float(values[i]);
    return b;
  }
  size_t size;
  float* data;
};

StatusOr<std::unique_ptr<CompiledKernels>> CompiledKernels::Open(
    const std::string& library_path, const Graph& graph, const ModelTasks& tasks,
    const std::map<std::string, std::string>& packed_symbols) {
  std::unique_ptr<CompiledKernels> kernels(new CompiledKernels());
  kernels->graph_ = &graph;
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

KernelExecutor CompiledKernels::executor() {
  return [this](const KernelDefinition& kernel, const std::vector<const std::vector<double>*>& inputs) {
    return Run(kernel, inputs);
  };
}

StatusOr<std::vector<double>> CompiledKernels::Run(const KernelDefinition& kernel,
                                                   const std::vector<const std::vector<double>*>& inputs) {
  std::vector<std::shared_ptr<Buffer>> buffers;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::string& name = kernel.input_tensors[i];
    if (!graph_->IsConstant(name)) {
      buffers.push_back(Buffer::Of(*inputs[i]));
      continue;
    }
    std::shared_ptr<Buffer>& cached = constants_[name];
    if (!cached) cached = Buffer::Of(*inputs[i]);
    buffers.push_back(cached);
  }
  auto output = std::make_shared<Buffer>(size_t(kernel.workload->output_stage().output->num_elements()));
  std::vector<void*> args;
  for (const auto& b : buffers) args.push_back(b->data);
  args.push_back(output->data);
  const auto start = std::chrono::steady_clock::now();
  packed_.at(kernel.workload->key())(args.data());
  kernel_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return std::vector<double>(output->data, output->data + output->size);
}

}  // namespace tuned::model

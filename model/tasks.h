#ifndef TUNED_MODEL_TASKS_H_
#define TUNED_MODEL_TASKS_H_

/// \file
/// A model's tuning tasks: each fused kernel written in the workload language, and kernels with
/// the same workload key made one task whose weight is how often the model runs it.

#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "compiler/ir/workload.h"
#include "model/fusion.h"
#include "model/graph.h"

namespace tuned::model {

/// One fused kernel of the model, written out.
struct KernelDefinition {
  std::string text;                        // the workload-language definition
  std::vector<std::string> input_tensors;  // model tensors, in the kernel's input order
  std::string output_tensor;
  std::string ops;                         // the operators it computes, "Conv+BatchNormalization+Relu"
  std::shared_ptr<const ir::Workload> workload;
};

struct Task {
  std::shared_ptr<const ir::Workload> workload;  // its key is the task's workload key
  std::string ops;        // the operators of its kernels
  std::string shape;      // the output shape, "1x64x56x56"
  int weight = 0;         // kernels of the model that are this task
  std::vector<int> kernels;  // indices into ModelTasks::kernels
};

struct ModelTasks {
  Partition partition;
  std::vector<KernelDefinition> kernels;  // parallel to partition.kernels
  std::vector<Task> tasks;                // in the order of their first kernel
  /// FLOPs of one run of the model's kernels: the sum of weight × FLOPs.
  double flops() const;
};

StatusOr<KernelDefinition> WriteKernel(const Graph& graph, const FusedKernel& kernel);

StatusOr<ModelTasks> ExtractTasks(const Graph& graph);

}  // namespace tuned::model

#endif  // TUNED_MODEL_TASKS_H_

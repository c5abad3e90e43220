#ifndef TUNED_CLI_MODEL_FLAGS_H_
#define TUNED_CLI_MODEL_FLAGS_H_

/// \file
/// How a command names a whole model: `--model model.onnx` with `--input-shape NAME=1x3x224x224`
/// (repeatable) for inputs the model leaves open.

#include <string>
#include <vector>

#include "cli/cli_support.h"
#include "model/graph.h"
#include "model/tasks.h"

namespace tuned::cli {

struct ModelFlags {
  std::string path;
  std::vector<std::string> input_shapes;
};

/// `--model` is required unless another flag names what to work on (`tuned tune --workload`).
void AddModelFlags(CLI::App& cmd, ModelFlags& flags, bool required = true);

/// Imports the model and extracts its tasks; errors are one line naming what is wrong.
struct LoadedModel {
  model::Graph graph;
  model::ModelTasks tasks;
};
StatusOr<LoadedModel> LoadModel(const ModelFlags& flags);

}  // namespace tuned::cli

#endif  // TUNED_CLI_MODEL_FLAGS_H_

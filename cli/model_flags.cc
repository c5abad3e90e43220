#include "cli/model_flags.h"

#include "model/onnx_import.h"

namespace tuned::cli {

void AddModelFlags(CLI::App& cmd, ModelFlags& flags, bool required) {
  cmd.add_option("--model", flags.path, "ONNX model file")->required(required);
  cmd.add_option("--input-shape", flags.input_shapes,
                 "Static shape of a model input the model leaves open, NAME=1x3x224x224 (repeatable)");
}

StatusOr<LoadedModel> LoadModel(const ModelFlags& flags) {
  model::ImportOptions options;
  for (const std::string& text : flags.input_shapes) {
    TUNED_ASSIGN_OR_RETURN(auto shape, model::ParseInputShape(text));
    options.input_shapes.push_back(std::move(shape));
  }
  LoadedModel loaded;
  TUNED_ASSIGN_OR_RETURN(loaded.graph, model::ImportOnnx(flags.path, options));
  TUNED_ASSIGN_OR_RETURN(loaded.tasks, model::ExtractTasks(loaded.graph));
  return loaded;
}

}  // namespace tuned::cli

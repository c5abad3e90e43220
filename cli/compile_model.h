#ifndef TUNED_CLI_COMPILE_MODEL_H_
#define TUNED_CLI_COMPILE_MODEL_H_

/// \file
/// `tuned compile --model model.onnx -o model.so`: one library with the best recorded kernel of
/// every task of the model (the default schedule where the log has none, with the reason), its
/// header, and a manifest `model.json` beside it that maps each step of the model to a function
/// and its arguments (model tensor names, inputs then the output), or lists the node as outside
/// the kernels with the reason. `tuned run-model` and anyone else run the model from the three.

#include <string>

#include "cli/model_flags.h"
#include "compiler/reuse/record_source.h"
#include "target/target.h"

namespace tuned::cli {

struct CompileModelOptions {
  ModelFlags model;
  std::string output;           // OUT.so or OUT.o
  std::string prefix = "tuned";  // functions are <prefix>_task<N>
  bool allow_compatible = false;
  bool json = false;
};

/// The manifest's path for a library path: OUT.json.
std::string ManifestPath(const std::string& library_path);

Status CompileModel(const CompileModelOptions& options, reuse::RecordSource& source, const target::Target& target);

}  // namespace tuned::cli

#endif  // TUNED_CLI_COMPILE_MODEL_H_

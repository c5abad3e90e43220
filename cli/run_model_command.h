#ifndef TUNED_CLI_RUN_MODEL_COMMAND_H_
#define TUNED_CLI_RUN_MODEL_COMMAND_H_

/// \file
/// `tuned run-model --model model.onnx --library model.so`: the model run through the compiled
/// kernels (and plain reference code for the nodes outside them), timed; `--check` compares the
/// outputs with the float64 reference of every kernel, `--inputs`/`--save` exchange raw float32
/// tensors with other runtimes (bench/model/ compares with onnxruntime). A test and benchmark
/// tool, not an inference engine.

#include "cli/cli_support.h"

namespace tuned::cli {

void RegisterRunModelCommand(Program& program);

}  // namespace tuned::cli

#endif  // TUNED_CLI_RUN_MODEL_COMMAND_H_

#ifndef TUNED_MODEL_ONNX_IMPORT_H_
#define TUNED_MODEL_ONNX_IMPORT_H_

/// \file
/// Reads an ONNX model file into a static-shape Graph: ONNX's own shape inference (with data
/// propagation, so shapes computed by Shape/Gather/Concat chains resolve) after the caller's
/// input shapes are set. Every error is one line naming the file and what is wrong: a tensor
/// whose shape stays unknown, an input dimension left open, weights stored outside the file.
/// Inference-mode BatchNormalization with constant statistics comes back folded
/// (fold_batch_norm.h), and nodes that read only constants evaluated (fold_constants.h).

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "model/graph.h"

namespace tuned::model {

struct ImportOptions {
  /// Static shapes for graph inputs that leave dimensions open (`--input-shape name=1x3x224x224`).
  std::vector<std::pair<std::string, std::vector<int64_t>>> input_shapes;
};

StatusOr<Graph> ImportOnnx(const std::string& path, const ImportOptions& options = {});

/// Parses "name=1x3x224x224" (a dimension list of positive integers).
StatusOr<std::pair<std::string, std::vector<int64_t>>> ParseInputShape(const std::string& text);

/// Reads a serialized ONNX TensorProto (the `input_0.pb` files of ONNX's test data) as a
/// constant tensor.
StatusOr<Tensor> ReadTensorFile(const std::string& path);

}  // namespace tuned::model

#endif  // TUNED_MODEL_ONNX_IMPORT_H_

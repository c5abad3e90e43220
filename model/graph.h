#ifndef TUNED_MODEL_GRAPH_H_
#define TUNED_MODEL_GRAPH_H_

/// \file
/// A model as tuned sees it after import: a static-shape dataflow graph of ONNX operators.
/// Every tensor has a known element type and shape; constants (initializers and Constant nodes)
/// carry their values. Nodes are in topological order. Nothing here knows the ONNX library: the
/// importer (onnx_import.h) is the only code that reads ONNX's messages.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tuned::model {

/// A node attribute: one of the kinds ONNX operators tuned understands use.
struct Attribute {
  enum class Kind { kInt, kFloat, kInts, kFloats, kString, kOther };
  Kind kind = Kind::kOther;
  int64_t i = 0;
  double f = 0;
  std::vector<int64_t> ints;
  std::vector<double> floats;
  std::string s;
};

struct Tensor {
  std::string name;
  /// The workload language's dtype names ("float32", "int64", ...); other ONNX element types
  /// keep ONNX's lower-case name ("bool", "uint8", "string"), which no kernel accepts.
  std::string dtype;
  std::vector<int64_t> shape;
  bool is_constant = false;
  /// A constant's values, row-major (empty for other tensors and for constants of a dtype that
  /// holds no numbers).
  std::vector<double> values;
  /// For a constant tuned computed from the model's own (not in the model file): how, one line.
  std::string derived_from;

  int64_t elements() const;
};

struct Node {
  std::string name;  // the model's name, or "<op>_<index>" where the model gives none
  std::string op;    // ONNX operator type, e.g. "Conv"
  /// Tensor names; "" marks an optional input the model leaves out.
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  std::map<std::string, Attribute> attributes;

  const Attribute* Find(const std::string& attribute) const;
  int64_t Int(const std::string& attribute, int64_t fallback) const;
  double Float(const std::string& attribute, double fallback) const;
  std::vector<int64_t> Ints(const std::string& attribute, std::vector<int64_t> fallback) const;
  std::string String(const std::string& attribute, std::string fallback) const;
  /// Input `index` when the node has it ("" otherwise).
  const std::string& Input(size_t index) const;
};

struct Graph {
  std::map<std::string, Tensor> tensors;  // every tensor, by name
  std::vector<Node> nodes;                // topological order
  std::vector<std::string> inputs;        // graph inputs the caller feeds (not constants)
  std::vector<std::string> outputs;
  int64_t opset = 0;                      // the default domain's opset version

  const Tensor& tensor(const std::string& name) const;
  bool IsConstant(const std::string& name) const;
};

/// "1x3x224x224"; "scalar" for rank 0.
std::string FormatShape(const std::vector<int64_t>& shape);

}  // namespace tuned::model

#endif  // TUNED_MODEL_GRAPH_H_

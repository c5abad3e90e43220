// The only file that includes ONNX's headers: ONNX messages become a model::Graph here.
#include "model/onnx_import.h"

#include <cstring>
#include <exception>
#include <fstream>
#include <set>
#include <sstream>
#include <unordered_map>

#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include "model/fold_batch_norm.h"
#include "model/fold_constants.h"

namespace tuned::model {
namespace {

using onnx::TensorProto;

std::string DtypeName(int32_t elem_type) {
  switch (elem_type) {
    case TensorProto::FLOAT: return "float32";
    case TensorProto::DOUBLE: return "float64";
    case TensorProto::FLOAT16: return "float16";
    case TensorProto::INT8: return "int8";
    case TensorProto::INT32: return "int32";
    case TensorProto::INT64: return "int64";
    case TensorProto::UINT8: return "uint8";
    case TensorProto::UINT16: return "uint16";
    case TensorProto::INT16: return "int16";
    case TensorProto::UINT32: return "uint32";
    case TensorProto::UINT64: return "uint64";
    case TensorProto::BOOL: return "bool";
    case TensorProto::STRING: return "string";
    case TensorProto::BFLOAT16: return "bfloat16";
    default: return "unknown element type " + std::to_string(elem_type);
  }
}

// The little-endian values of raw_data as doubles (every machine tuned runs on is little-endian).
template <typename T>
std::vector<double> RawValues(const std::string& raw) {
  std::vector<double> values(raw.size() / sizeof(T));
  for (size_t i = 0; i < values.size(); ++i) {
    T v;
    std::memcpy(&v, raw.data() + i * sizeof(T), sizeof(T));
    values[i] = double(v);
  }
  return values;
}

// The values of a tensor stored as raw data of element type T, or in its typed field.
template <typename T, typename Field>
std::vector<double> ValuesOf(const TensorProto& proto, const Field& field) {
  if (proto.has_raw_data()) return RawValues<T>(proto.raw_data());
  return std::vector<double>(field.begin(), field.end());
}

// A TensorProto as a constant Tensor. Element types without numbers (strings) keep no values.
StatusOr<Tensor> ConstantOf(const TensorProto& proto, const std::string& where) {
  if (proto.data_location() == TensorProto::EXTERNAL) {
    return InvalidArgumentError(where + ": tensor '" + proto.name() +
                                "' keeps its data in an external file, which tuned does not read; "
                                "expected the weights inside the model file");
  }
  Tensor t;
  t.name = proto.name();
  t.dtype = DtypeName(proto.data_type());
  t.is_constant = true;
  for (int64_t d : proto.dims()) t.shape.push_back(d);
  switch (proto.data_type()) {
    case TensorProto::FLOAT: t.values = ValuesOf<float>(proto, proto.float_data()); break;
    case TensorProto::DOUBLE: t.values = ValuesOf<double>(proto, proto.double_data()); break;
    case TensorProto::INT64: t.values = ValuesOf<int64_t>(proto, proto.int64_data()); break;
    case TensorProto::INT32: t.values = ValuesOf<int32_t>(proto, proto.int32_data()); break;
    case TensorProto::INT8: t.values = ValuesOf<int8_t>(proto, proto.int32_data()); break;
    case TensorProto::BOOL: t.values = ValuesOf<uint8_t>(proto, proto.int32_data()); break;
    default: break;  // no values: nothing tuned computes reads them
  }
  if (!t.values.empty() && int64_t(t.values.size()) != t.elements()) {
    return InvalidArgumentError(where + ": tensor '" + t.name + "' has " +
                                std::to_string(t.values.size()) + " values for shape " +
                                FormatShape(t.shape) + "; expected " + std::to_string(t.elements()));
  }
  return t;
}

Attribute AttributeOf(const onnx::AttributeProto& proto) {
  Attribute a;
  switch (proto.type()) {
    case onnx::AttributeProto::INT: a.kind = Attribute::Kind::kInt; a.i = proto.i(); break;
    case onnx::AttributeProto::FLOAT: a.kind = Attribute::Kind::kFloat; a.f = proto.f(); break;
    case onnx::AttributeProto::INTS:
      a.kind = Attribute::Kind::kInts;
      a.ints.assign(proto.ints().begin(), proto.ints().end());
      break;
    case onnx::AttributeProto::FLOATS:
      a.kind = Attribute::Kind::kFloats;
      a.floats.assign(proto.floats().begin(), proto.floats().end());
      break;
    case onnx::AttributeProto::STRING: a.kind = Attribute::Kind::kString; a.s = proto.s(); break;
    default: break;
  }
  return a;
}

// Sets the caller's static shapes on the graph inputs and checks that none is left open.
Status FixInputShapes(onnx::GraphProto& graph, const std::set<std::string>& initializers,
                      const ImportOptions& options, const std::string& where) {
  std::set<std::string> given;
  for (const auto& [name, shape] : options.input_shapes) {
    onnx::ValueInfoProto* input = nullptr;
    std::string names;
    for (onnx::ValueInfoProto& v : *graph.mutable_input()) {
      if (initializers.count(v.name())) continue;
      if (v.name() == name) input = &v;
      names += (names.empty() ? "" : ", ") + v.name();
    }
    if (input == nullptr) {
      return InvalidArgumentError(where + ": --input-shape names '" + name +
                                  "', which is not an input of the model; its inputs: " + names);
    }
    onnx::TensorShapeProto* dims = input->mutable_type()->mutable_tensor_type()->mutable_shape();
    if (dims->dim_size() != 0 && dims->dim_size() != int(shape.size())) {
      return InvalidArgumentError(where + ": --input-shape " + name + "=" + FormatShape(shape) +
                                  " has rank " + std::to_string(shape.size()) + "; the model's input has rank " +
                                  std::to_string(dims->dim_size()));
    }
    dims->clear_dim();
    for (int64_t d : shape) dims->add_dim()->set_dim_value(d);
    given.insert(name);
  }
  for (const onnx::ValueInfoProto& v : graph.input()) {
    if (initializers.count(v.name())) continue;
    const auto& dims = v.type().tensor_type().shape().dim();
    for (int i = 0; i < dims.size(); ++i) {
      if (dims[i].has_dim_value() && dims[i].dim_value() > 0) continue;
      std::string symbol = dims[i].has_dim_param() ? " ('" + dims[i].dim_param() + "')" : "";
      return InvalidArgumentError(where + ": input '" + v.name() + "' leaves dimension " +
                                  std::to_string(i) + symbol + " open; give it with --input-shape " +
                                  v.name() + "=...");
    }
  }
  return Status::Ok();
}

// A tensor's dtype and static shape from shape inference's value info.
StatusOr<Tensor> ValueOf(const onnx::ValueInfoProto& info, const std::string& where) {
  Tensor t;
  t.name = info.name();
  const onnx::TypeProto::Tensor& type = info.type().tensor_type();
  t.dtype = DtypeName(type.elem_type());
  if (!type.has_shape()) {
    return InvalidArgumentError(where + ": tensor '" + t.name +
                                "' has no static shape after shape inference; expected every tensor's "
                                "shape to follow from the input shapes");
  }
  for (const auto& d : type.shape().dim()) {
    if (!d.has_dim_value()) {
      return InvalidArgumentError(where + ": tensor '" + t.name +
                                  "' has a dimension that shape inference leaves open; expected "
                                  "every tensor's shape to follow from the input shapes");
    }
    t.shape.push_back(d.dim_value());
  }
  return t;
}

}  // namespace

StatusOr<std::pair<std::string, std::vector<int64_t>>> ParseInputShape(const std::string& text) {
  size_t eq = text.find('=');
  auto bad = [&] {
    return InvalidArgumentError("--input-shape '" + text +
                                "': expected NAME=D1xD2x... with positive integers, e.g. input=1x3x224x224");
  };
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size() || text.back() == 'x') return bad();
  std::vector<int64_t> shape;
  std::stringstream dims(text.substr(eq + 1));
  std::string dim;
  while (std::getline(dims, dim, 'x')) {
    if (dim.empty() || dim.size() > 12 || dim.find_first_not_of("0123456789") != std::string::npos) return bad();
    int64_t d = std::stoll(dim);
    if (d <= 0) return bad();
    shape.push_back(d);
  }
  return std::make_pair(text.substr(0, eq), shape);
}

StatusOr<Graph> ImportOnnx(const std::string& path, const ImportOptions& options) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return NotFoundError("model '" + path + "': cannot open the file");
  onnx::ModelProto model;
  if (!model.ParseFromIstream(&file)) {
    return InvalidArgumentError("model '" + path + "': not an ONNX model (the protobuf does not parse)");
  }
  const std::string where = "model '" + path + "'";
  Graph graph;
  for (const onnx::OperatorSetIdProto& set : model.opset_import()) {
    if (set.domain().empty() || set.domain() == "ai.onnx") graph.opset = set.version();
  }
  if (graph.opset == 0) return InvalidArgumentError(where + ": imports no opset of the default ONNX domain");

  std::set<std::string> initializers;
  for (const TensorProto& init : model.graph().initializer()) initializers.insert(init.name());
  TUNED_RETURN_IF_ERROR(FixInputShapes(*model.mutable_graph(), initializers, options, where));
  try {
    onnx::ShapeInferenceOptions inference(/*check_type_val=*/true, /*strict_mode_val=*/1,
                                          /*data_prop_val=*/true);
    onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(), inference);
  } catch (const std::exception& e) {
    std::string message = e.what();
    for (char& c : message) if (c == '\n') c = ' ';
    while (!message.empty() && message.back() == ' ') message.pop_back();
    return InvalidArgumentError(where + ": shape inference failed: " + message);
  }

  const onnx::GraphProto& g = model.graph();
  for (const TensorProto& init : g.initializer()) {
    TUNED_ASSIGN_OR_RETURN(Tensor t, ConstantOf(init, where));
    graph.tensors[t.name] = std::move(t);
  }
  auto add_value = [&](const onnx::ValueInfoProto& info) -> Status {
    if (graph.tensors.count(info.name())) return Status::Ok();
    TUNED_ASSIGN_OR_RETURN(Tensor t, ValueOf(info, where));
    graph.tensors[t.name] = std::move(t);
    return Status::Ok();
  };
  for (const onnx::ValueInfoProto& v : g.input()) {
    if (initializers.count(v.name())) continue;
    TUNED_RETURN_IF_ERROR(add_value(v));
    graph.inputs.push_back(v.name());
  }
  for (const onnx::ValueInfoProto& v : g.value_info()) TUNED_RETURN_IF_ERROR(add_value(v));
  for (const onnx::ValueInfoProto& v : g.output()) {
    TUNED_RETURN_IF_ERROR(add_value(v));
    graph.outputs.push_back(v.name());
  }

  std::set<std::string> defined(graph.inputs.begin(), graph.inputs.end());
  defined.insert(initializers.begin(), initializers.end());
  for (int index = 0; index < g.node_size(); ++index) {
    const onnx::NodeProto& proto = g.node(index);
    if (!proto.domain().empty() && proto.domain() != "ai.onnx") {
      return InvalidArgumentError(where + ": node '" + proto.name() + "' is of domain '" +
                                  proto.domain() + "'; expected the default ONNX domain");
    }
    Node node;
    node.name = proto.name().empty() ? proto.op_type() + "_" + std::to_string(index) : proto.name();
    node.op = proto.op_type();
    node.inputs.assign(proto.input().begin(), proto.input().end());
    node.outputs.assign(proto.output().begin(), proto.output().end());
    for (const std::string& in : node.inputs) {
      if (!in.empty() && !defined.count(in)) {
        return InvalidArgumentError(where + ": node '" + node.name + "' reads '" + in +
                                    "' before any node computes it; expected nodes in topological order");
      }
    }
    for (const std::string& out : node.outputs) defined.insert(out);
    if (node.op == "Constant") {
      // A constant node is a constant tensor, not work.
      for (const onnx::AttributeProto& a : proto.attribute()) {
        if (a.name() != "value" || a.type() != onnx::AttributeProto::TENSOR) continue;
        TUNED_ASSIGN_OR_RETURN(Tensor t, ConstantOf(a.t(), where));
        t.name = node.outputs.at(0);
        graph.tensors[t.name] = std::move(t);
      }
      if (!graph.IsConstant(node.outputs.at(0))) {
        return InvalidArgumentError(where + ": Constant node '" + node.name +
                                    "' has no tensor 'value'; expected value=TENSOR");
      }
      continue;
    }
    for (const onnx::AttributeProto& a : proto.attribute()) node.attributes[a.name()] = AttributeOf(a);
    for (const std::string& out : node.outputs) {
      if (!out.empty() && !graph.tensors.count(out)) {
        return InvalidArgumentError(where + ": tensor '" + out + "' (output of node '" + node.name +
                                    "', " + node.op + ") has no static shape after shape inference");
      }
    }
    graph.nodes.push_back(std::move(node));
  }
  FoldBatchNormalization(graph);
  FoldConstants(graph);
  return graph;
}

StatusOr<Tensor> ReadTensorFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return NotFoundError("tensor file '" + path + "': cannot open the file");
  TensorProto proto;
  if (!proto.ParseFromIstream(&file)) {
    return InvalidArgumentError("tensor file '" + path + "': not an ONNX TensorProto");
  }
  return ConstantOf(proto, "tensor file '" + path + "'");
}

}  // namespace tuned::model

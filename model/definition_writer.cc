#include "model/definition_writer.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace tuned::model {
namespace {

std::string Dims(const std::vector<int64_t>& shape) {
  if (shape.empty()) return "[1]";  // a rank-0 tensor is stored as one element
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

std::string Axes(const Index& names, const std::vector<int64_t>& extents) {
  std::string text;
  for (size_t i = 0; i < names.size(); ++i) {
    text += (i ? ", " : "") + names[i] + ": " + std::to_string(extents[i]);
  }
  return text;
}

}  // namespace

std::string DefinitionWriter::Input(const Tensor& tensor, const std::string& role) {
  for (size_t i = 0; i < input_tensors_.size(); ++i) {
    if (input_tensors_[i] == tensor.name) return input_names_[i];
  }
  std::string name = FreshName(role);
  inputs_.push_back("input " + name + ": " + tensor.dtype + Dims(tensor.shape));
  input_tensors_.push_back(tensor.name);
  input_names_.push_back(name);
  return name;
}

std::string DefinitionWriter::FreshName(const std::string& base) {
  std::string name = base;
  for (int n = 2; std::find(used_names_.begin(), used_names_.end(), name) != used_names_.end(); ++n) {
    name = base + std::to_string(n);
  }
  used_names_.push_back(name);
  return name;
}

KernelValue DefinitionWriter::Stage(const std::string& name, const std::vector<int64_t>& shape,
                                    const std::function<std::string(const Index&)>& body) {
  return Reduction(name, shape, "", {},
                   [&](const Index& axes, const Index&) { return body(axes); });
}

KernelValue DefinitionWriter::Reduction(
    const std::string& name, const std::vector<int64_t>& shape, const std::string& kind,
    const std::vector<int64_t>& reduce_extents,
    const std::function<std::string(const Index& axes, const Index& raxes)>& body) {
  // A rank-0 result is a stage of one element.
  std::vector<int64_t> stored = shape.empty() ? std::vector<int64_t>{1} : shape;
  Index axes, raxes;
  for (size_t i = 0; i < stored.size(); ++i) axes.push_back("a" + std::to_string(next_axis_++));
  for (size_t i = 0; i < reduce_extents.size(); ++i) raxes.push_back("r" + std::to_string(next_axis_++));
  Index value_axes = shape.empty() ? Index{} : axes;
  std::string expr = body(value_axes, raxes);
  if (!kind.empty()) expr = kind + "[" + Axes(raxes, reduce_extents) + "](" + expr + ")";
  stages_.push_back(name + "[" + Axes(axes, stored) + "] = " + expr);
  return KernelValue{shape, [name](const Index& index) { return Access(name, index); }, name};
}

std::string DefinitionWriter::Text() const {
  std::string text;
  for (const std::string& line : inputs_) text += line + "\n";
  for (const std::string& line : stages_) text += line + "\n";
  return text;
}

std::string FloatLiteral(double value) {
  float f = float(value);
  if (std::isinf(f)) f = f > 0 ? 3.40282347e38f : -3.40282347e38f;
  char text[40];
  std::snprintf(text, sizeof(text), "%.9g", double(f));
  std::string s = text;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  // A negative literal is an operator applied to a literal: parenthesise it.
  return s[0] == '-' ? "(" + s + ")" : s;
}

Index BroadcastIndex(const std::vector<int64_t>& from, const std::vector<int64_t>& to, const Index& index) {
  Index result;
  size_t offset = to.size() - from.size();
  for (size_t i = 0; i < from.size(); ++i) {
    result.push_back(from[i] == 1 && to[offset + i] != 1 ? "0" : index[offset + i]);
  }
  return result;
}

std::string Access(const std::string& name, const Index& index) {
  if (index.empty()) return name + "[0]";
  std::string text = name + "[";
  for (size_t i = 0; i < index.size(); ++i) text += (i ? ", " : "") + index[i];
  return text + "]";
}

}  // namespace tuned::model

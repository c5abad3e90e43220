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
  // A model's weights are constants: a kernel may pack them once, before its calls.
  inputs_.push_back("input " + name + ": " + (tensor.is_constant ? "const " : "") + tensor.dtype + Dims(tensor.shape));
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

KernelValue DefinitionWriter::Materialize(const std::string& name, const KernelValue& value) {
  if (value.compute_shape.empty()) return Stage(name, value.shape, value.at);
  KernelValue flat = Stage(name, value.compute_shape, [&](const Index& axes) {
    return value.at(ExpandIndex(value.shape, value.compute_shape, axes));
  });
  return ViewAs(flat, value.shape);
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

namespace {

// The dimensions of `shape` that each dimension of `compute_shape` covers: [begin, end) pairs.
// The caller guarantees that runs of `shape` multiply to the dimensions of `compute_shape`; the
// last run takes every dimension left (trailing extents of 1 included: a W of 1).
std::vector<std::pair<size_t, size_t>> MergedGroups(const std::vector<int64_t>& shape,
                                                    const std::vector<int64_t>& compute_shape) {
  std::vector<std::pair<size_t, size_t>> groups;
  size_t next = 0;
  for (size_t g = 0; g < compute_shape.size(); ++g) {
    size_t begin = next;
    int64_t product = 1;
    do {
      product *= shape[next++];
    } while (next < shape.size() && (product < compute_shape[g] || g + 1 == compute_shape.size()));
    groups.push_back({begin, next});
  }
  return groups;
}

// The components of a merged group [begin, end) of `shape` at flat position `flat`.
Index ExpandGroup(const std::vector<int64_t>& shape, size_t begin, size_t end, const std::string& flat) {
  Index parts(end - begin);
  int64_t inner = 1;
  for (size_t d = end; d-- > begin;) {
    std::string quotient = inner == 1 ? flat : "floordiv(" + flat + ", " + std::to_string(inner) + ")";
    parts[d - begin] = d == begin ? quotient : "floormod(" + quotient + ", " + std::to_string(shape[d]) + ")";
    inner *= shape[d];
  }
  return parts;
}

}  // namespace

Index ExpandIndex(const std::vector<int64_t>& shape, const std::vector<int64_t>& compute_shape, const Index& flat) {
  Index index;
  std::vector<std::pair<size_t, size_t>> groups = MergedGroups(shape, compute_shape);
  for (size_t g = 0; g < groups.size(); ++g) {
    Index parts = ExpandGroup(shape, groups[g].first, groups[g].second, flat[g]);
    index.insert(index.end(), parts.begin(), parts.end());
  }
  return index;
}

Index FlattenIndex(const std::vector<int64_t>& shape, const std::vector<int64_t>& compute_shape, const Index& index) {
  Index flat;
  for (auto [begin, end] : MergedGroups(shape, compute_shape)) {
    if (end - begin == 1) {
      flat.push_back(index[begin]);
      continue;
    }
    // ExpandIndex's own components give back the variable they were written from.
    const std::string& last = index[end - 1];
    const std::string prefix = "floormod(", suffix = ", " + std::to_string(shape[end - 1]) + ")";
    if (last.size() > prefix.size() + suffix.size() && last.compare(0, prefix.size(), prefix) == 0 &&
        last.compare(last.size() - suffix.size(), suffix.size(), suffix) == 0) {
      std::string var = last.substr(prefix.size(), last.size() - prefix.size() - suffix.size());
      if (ExpandGroup(shape, begin, end, var) == Index(index.begin() + long(begin), index.begin() + long(end))) {
        flat.push_back(var);
        continue;
      }
    }
    std::string offset = index[begin];
    for (size_t d = begin + 1; d < end; ++d) {
      offset = "(" + offset + ") * " + std::to_string(shape[d]) + " + " + index[d];
    }
    flat.push_back("(" + offset + ")");
  }
  return flat;
}

KernelValue ViewAs(const KernelValue& stage, const std::vector<int64_t>& shape) {
  if (stage.shape == shape) return stage;
  const std::vector<int64_t> compute = stage.shape;
  return KernelValue{shape,
                     [at = stage.at, shape, compute](const Index& index) { return at(FlattenIndex(shape, compute, index)); },
                     stage.stage, compute};
}

std::string Access(const std::string& name, const Index& index) {
  if (index.empty()) return name + "[0]";
  std::string text = name + "[";
  for (size_t i = 0; i < index.size(); ++i) text += (i ? ", " : "") + index[i];
  return text + "]";
}

}  // namespace tuned::model

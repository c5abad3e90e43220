#include "model/graph.h"

#include "common/check.h"

namespace tuned::model {

int64_t Tensor::elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

const Attribute* Node::Find(const std::string& attribute) const {
  auto it = attributes.find(attribute);
  return it == attributes.end() ? nullptr : &it->second;
}

int64_t Node::Int(const std::string& attribute, int64_t fallback) const {
  const Attribute* a = Find(attribute);
  return a != nullptr && a->kind == Attribute::Kind::kInt ? a->i : fallback;
}

double Node::Float(const std::string& attribute, double fallback) const {
  const Attribute* a = Find(attribute);
  return a != nullptr && a->kind == Attribute::Kind::kFloat ? a->f : fallback;
}

std::vector<int64_t> Node::Ints(const std::string& attribute, std::vector<int64_t> fallback) const {
  const Attribute* a = Find(attribute);
  return a != nullptr && a->kind == Attribute::Kind::kInts ? a->ints : fallback;
}

std::string Node::String(const std::string& attribute, std::string fallback) const {
  const Attribute* a = Find(attribute);
  return a != nullptr && a->kind == Attribute::Kind::kString ? a->s : fallback;
}

const std::string& Node::Input(size_t index) const {
  static const std::string kNone;
  return index < inputs.size() ? inputs[index] : kNone;
}

const Tensor& Graph::tensor(const std::string& name) const {
  auto it = tensors.find(name);
  TUNED_CHECK(it != tensors.end()) << "no tensor '" << name << "' in the imported graph";
  return it->second;
}

bool Graph::IsConstant(const std::string& name) const {
  auto it = tensors.find(name);
  return it != tensors.end() && it->second.is_constant;
}

std::string FormatShape(const std::vector<int64_t>& shape) {
  if (shape.empty()) return "scalar";
  std::string text;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) text += "x";
    text += std::to_string(shape[i]);
  }
  return text;
}

}  // namespace tuned::model

// Parsing of workload specs: "op(name=value,...)" against the op library's parameter lists, and
// definition keys ("tdl: ...", compiler/ir/tdl/). The one place a key becomes a workload.

#include <cctype>
#include <charconv>
#include <cstdio>

#include "compiler/ir/op_library.h"
#include "compiler/ir/tdl/definition.h"

namespace tuned::ir {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool IsIdentifier(std::string_view s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  }
  return true;
}

// Checks one value against its parameter kind and returns its canonical text.
StatusOr<std::string> CanonicalValue(const std::string& op, const ParamSpec& param,
                                     std::string_view value) {
  auto bad = [&](const std::string& why) {
    return InvalidArgumentError("workload spec " + op + ": parameter " + param.name + "='" +
                                std::string(value) + "' " + why);
  };
  switch (param.kind) {
    case ParamKind::kInt: {
      int64_t v = 0;
      auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
      if (ec == std::errc::result_out_of_range) return bad("is out of range");
      if (ec != std::errc() || end != value.data() + value.size()) return bad("is not an integer");
      if (v < param.min_value) return bad("must be at least " + std::to_string(param.min_value));
      if (v > param.max_value) return bad("must be at most " + std::to_string(param.max_value));
      return std::to_string(v);
    }
    case ParamKind::kDtype: {
      StatusOr<DataType> t = ParseDataType(value);
      if (!t.ok()) return bad("is not a dtype (float32, float64, float16, int32, int8)");
      return t->ToString();
    }
    case ParamKind::kBool:
      if (value == "true" || value == "1") return std::string("true");
      if (value == "false" || value == "0") return std::string("false");
      return bad("is not a boolean (true or false)");
    case ParamKind::kChoice: {
      std::string list;
      for (const std::string& c : param.choices) {
        if (value == c) return c;
        list += (list.empty() ? "" : ", ") + c;
      }
      return bad("is not one of " + list);
    }
  }
  return bad("has an unknown kind");
}

}  // namespace

StatusOr<Workload> ParseWorkloadSpec(std::string_view spec, const SpecLimits& limits) {
  std::string_view text = Trim(spec);
  if (IsDefinitionKey(text)) return ParseDefinitionKey(text, limits);
  size_t open = text.find('(');
  if (open == std::string_view::npos || text.back() != ')') {
    return InvalidArgumentError("workload spec '" + std::string(text) +
                                "' is not of the form op(name=value,...)");
  }
  std::string op(Trim(text.substr(0, open)));
  const OpDef* def = nullptr;
  std::string known;
  for (const OpDef& d : OpLibrary()) {
    if (d.name == op) def = &d;
    known += (known.empty() ? "" : ", ") + d.name;
  }
  if (def == nullptr) {
    return InvalidArgumentError("unknown op '" + op + "' in workload spec (known ops: " + known + ")");
  }

  std::map<std::string, std::string> values;
  std::string_view args = text.substr(open + 1, text.size() - open - 2);
  if (!Trim(args).empty()) {
    size_t start = 0;
    while (start <= args.size()) {
      size_t comma = args.find(',', start);
      std::string_view item = Trim(args.substr(start, comma == std::string_view::npos ? args.npos : comma - start));
      size_t eq = item.find('=');
      if (eq == std::string_view::npos) {
        return InvalidArgumentError("workload spec " + op + ": '" + std::string(item) +
                                    "' is not of the form name=value");
      }
      std::string name(Trim(item.substr(0, eq)));
      std::string_view value = Trim(item.substr(eq + 1));
      if (!IsIdentifier(name)) {
        return InvalidArgumentError("workload spec " + op + ": '" + name + "' is not a parameter name");
      }
      const ParamSpec* param = nullptr;
      for (const ParamSpec& p : def->params) {
        if (p.name == name) param = &p;
      }
      if (param == nullptr) {
        std::string names;
        for (const ParamSpec& p : def->params) names += (names.empty() ? "" : ", ") + p.name;
        return InvalidArgumentError("workload spec " + op + ": unknown parameter '" + name +
                                    "' (parameters: " + names + ")");
      }
      if (values.count(name)) {
        return InvalidArgumentError("workload spec " + op + ": parameter " + name + " given twice");
      }
      TUNED_ASSIGN_OR_RETURN(values[name], CanonicalValue(op, *param, value));
      if (comma == std::string_view::npos) break;
      start = comma + 1;
    }
  }

  std::vector<std::pair<std::string, std::string>> canonical;
  for (const ParamSpec& p : def->params) {
    auto it = values.find(p.name);
    if (it == values.end()) {
      if (p.default_value.empty()) {
        return InvalidArgumentError("workload spec " + op + ": missing parameter " + p.name);
      }
      it = values.emplace(p.name, p.default_value).first;
    }
    canonical.emplace_back(p.name, it->second);
  }
  TUNED_ASSIGN_OR_RETURN(Workload workload, def->build(OpParams(values), canonical));
  auto check_size = [&](const Buffer& b) -> Status {
    double bytes = double(b->dtype.bytes());
    for (int64_t d : b->shape) bytes *= double(d);
    if (bytes > double(limits.max_buffer_bytes)) {
      // Printed from the double: the size may be beyond what an int64_t holds.
      char needed[64];
      std::snprintf(needed, sizeof(needed), "%.0f", bytes);
      return InvalidArgumentError("workload spec " + workload.key() + ": buffer " + b->name +
                                  " needs " + needed + " bytes, over the limit of " +
                                  std::to_string(limits.max_buffer_bytes));
    }
    return Status::Ok();
  };
  for (const Buffer& b : workload.inputs()) TUNED_RETURN_IF_ERROR(check_size(b));
  for (const ComputeStage& st : workload.stages()) TUNED_RETURN_IF_ERROR(check_size(st.output));
  return workload;
}

}  // namespace tuned::ir

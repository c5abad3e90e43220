#include "tuning_db/record_text.h"

#include <cctype>
#include <map>
#include <sstream>
#include <string_view>

namespace tuned::db {
namespace {

// "MEASURE_STATUS_COMPILE_ERROR" with prefix "MEASURE_STATUS_" -> "compile_error".
std::string Label(const std::string& name, std::string_view prefix, std::string_view fallback,
                  int value) {
  if (name.empty()) return std::string(fallback) + "_" + std::to_string(value);
  std::string label = name.substr(name.rfind(prefix, 0) == 0 ? prefix.size() : 0);
  for (char& c : label) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return label;
}

void AppendValue(std::ostringstream& out, const v1::TraceValue& value) {
  switch (value.value_case()) {
    case v1::TraceValue::kRv:
      out << 'v' << value.rv();
      break;
    case v1::TraceValue::kIntValue:
      out << value.int_value();
      break;
    case v1::TraceValue::kNone:
    case v1::TraceValue::VALUE_NOT_SET:
      out << "none";
      break;
  }
}

template <typename List, typename Append>
void AppendList(std::ostringstream& out, const List& list, Append append) {
  bool first = true;
  for (const auto& item : list) {
    if (!first) out << ", ";
    first = false;
    append(item);
  }
}

}  // namespace

std::string MeasureStatusLabel(v1::MeasureStatus status) {
  return Label(v1::MeasureStatus_Name(status), "MEASURE_STATUS_", "status", status);
}

std::string TaskStateLabel(v1::TaskState state) {
  return Label(v1::TaskState_Name(state), "TASK_STATE_", "state", state);
}

std::string FormatTrace(const v1::Trace& trace) {
  if (trace.instructions().empty()) return "(empty trace)\n";
  std::map<uint32_t, const v1::Decision*> decisions;
  for (const v1::Decision& decision : trace.decisions()) {
    decisions[decision.instruction()] = &decision;
  }
  std::ostringstream out;
  for (int i = 0; i < trace.instructions_size(); ++i) {
    const v1::Instruction& inst = trace.instructions(i);
    out << (i < 10 ? "   " : i < 100 ? "  " : " ") << i << ": ";
    if (!inst.outputs().empty()) {
      AppendList(out, inst.outputs(), [&](uint32_t rv) { out << 'v' << rv; });
      out << " = ";
    }
    out << inst.kind() << '(';
    AppendList(out, inst.inputs(), [&](const v1::TraceValue& value) { AppendValue(out, value); });
    out << ')';
    if (!inst.int_attrs().empty()) {
      out << " int=[";
      AppendList(out, inst.int_attrs(), [&](int64_t v) { out << v; });
      out << ']';
    }
    if (!inst.float_attrs().empty()) {
      out << " float=[";
      AppendList(out, inst.float_attrs(), [&](double v) { out << v; });
      out << ']';
    }
    if (!inst.str_attrs().empty()) {
      out << " str=[";
      AppendList(out, inst.str_attrs(), [&](const std::string& v) { out << '"' << v << '"'; });
      out << ']';
    }
    if (auto it = decisions.find(static_cast<uint32_t>(i)); it != decisions.end()) {
      out << "   # decision [";
      AppendList(out, it->second->values(), [&](int64_t v) { out << v; });
      out << ']';
    }
    out << '\n';
  }
  for (const auto& [index, decision] : decisions) {
    if (index >= static_cast<uint32_t>(trace.instructions_size())) {
      out << "  (decision for missing instruction " << index << ")\n";
    }
  }
  return out.str();
}

}  // namespace tuned::db

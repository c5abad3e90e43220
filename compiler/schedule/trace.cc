#include "compiler/schedule/trace.h"

#include <set>
#include <sstream>

#include <google/protobuf/util/json_util.h>

#include "tuned/v1/trace.pb.h"

namespace tuned::schedule {
namespace {

struct KindInfo {
  InstKind kind;
  const char* name;
};

constexpr KindInfo kKinds[] = {
    {InstKind::kGetBlock, "get_block"},
    {InstKind::kGetLoops, "get_loops"},
    {InstKind::kSplit, "split"},
    {InstKind::kFuse, "fuse"},
    {InstKind::kReorder, "reorder"},
    {InstKind::kParallel, "parallel"},
    {InstKind::kVectorize, "vectorize"},
    {InstKind::kUnroll, "unroll"},
    {InstKind::kBind, "bind"},
    {InstKind::kAnnotate, "annotate"},
    {InstKind::kCacheRead, "cache_read"},
    {InstKind::kCacheWrite, "cache_write"},
    {InstKind::kComputeAt, "compute_at"},
    {InstKind::kReverseComputeAt, "reverse_compute_at"},
    {InstKind::kComputeInline, "compute_inline"},
    {InstKind::kReverseComputeInline, "reverse_compute_inline"},
    {InstKind::kDecomposeReduction, "decompose_reduction"},
    {InstKind::kSamplePerfectTile, "sample_perfect_tile"},
    {InstKind::kSampleCategorical, "sample_categorical"},
    {InstKind::kSampleComputeLocation, "sample_compute_location"},
    {InstKind::kSampleTile, "sample_tile"},
    {InstKind::kRFactor, "rfactor"},
    {InstKind::kBlockLayout, "block_layout"},
};

}  // namespace

const char* InstKindName(InstKind kind) {
  for (const KindInfo& k : kKinds) {
    if (k.kind == kind) return k.name;
  }
  return "?";
}

StatusOr<InstKind> ParseInstKind(std::string_view name) {
  for (const KindInfo& k : kKinds) {
    if (name == k.name) return k.kind;
  }
  return InvalidArgumentError("unknown instruction kind '" + std::string(name) + "'");
}

bool IsSampling(InstKind kind) {
  return kind == InstKind::kSamplePerfectTile || kind == InstKind::kSampleTile ||
         kind == InstKind::kSampleCategorical || kind == InstKind::kSampleComputeLocation;
}

std::string Trace::ToString() const {
  std::ostringstream os;
  for (size_t i = 0; i < instructions.size(); ++i) {
    const Instruction& inst = instructions[i];
    os << i << ": ";
    for (size_t o = 0; o < inst.outputs.size(); ++o) os << (o ? ", " : "") << "v" << inst.outputs[o];
    if (!inst.outputs.empty()) os << " = ";
    os << InstKindName(inst.kind) << "(";
    bool first = true;
    auto sep = [&]() -> std::ostream& {
      if (!first) os << ", ";
      first = false;
      return os;
    };
    for (const TraceArg& a : inst.inputs) {
      if (a.kind == TraceArg::Kind::kRV) sep() << "v" << a.value;
      else if (a.kind == TraceArg::Kind::kInt) sep() << a.value;
      else sep() << "none";
    }
    for (const std::string& s : inst.str_attrs) sep() << '"' << s << '"';
    for (int64_t v : inst.int_attrs) sep() << v;
    for (double v : inst.float_attrs) sep() << v;
    os << ")";
    auto d = decisions.find(int(i));
    if (d != decisions.end()) {
      os << "  decision=[";
      for (size_t k = 0; k < d->second.size(); ++k) os << (k ? ", " : "") << d->second[k];
      os << "]";
    }
    os << "\n";
  }
  return os.str();
}

void TraceToProto(const Trace& trace, v1::Trace* proto) {
  proto->Clear();
  proto->set_version(kTraceVersion);
  for (const Instruction& inst : trace.instructions) {
    v1::Instruction* p = proto->add_instructions();
    p->set_kind(InstKindName(inst.kind));
    for (const TraceArg& a : inst.inputs) {
      v1::TraceValue* v = p->add_inputs();
      if (a.kind == TraceArg::Kind::kRV) v->set_rv(uint32_t(a.value));
      else if (a.kind == TraceArg::Kind::kInt) v->set_int_value(a.value);
      else v->set_none(true);
    }
    for (int64_t v : inst.int_attrs) p->add_int_attrs(v);
    for (double v : inst.float_attrs) p->add_float_attrs(v);
    for (const std::string& s : inst.str_attrs) p->add_str_attrs(s);
    for (uint32_t o : inst.outputs) p->add_outputs(o);
  }
  for (const auto& [index, values] : trace.decisions) {
    v1::Decision* d = proto->add_decisions();
    d->set_instruction(uint32_t(index));
    for (int64_t v : values) d->add_values(v);
  }
}

StatusOr<Trace> TraceFromProto(const v1::Trace& proto) {
  if (proto.version() != kTraceVersion) {
    return InvalidArgumentError("trace version " + std::to_string(proto.version()) +
                                " is not supported (this tuned reads version " +
                                std::to_string(kTraceVersion) + ")");
  }
  Trace trace;
  std::set<uint32_t> defined;
  for (int i = 0; i < proto.instructions_size(); ++i) {
    const v1::Instruction& p = proto.instructions(i);
    std::string where = "trace instruction " + std::to_string(i) + " (" + p.kind() + ")";
    StatusOr<InstKind> kind = ParseInstKind(p.kind());
    if (!kind.ok()) return kind.status().WithContext("trace instruction " + std::to_string(i));
    Instruction inst{*kind, {}, {}, {}, {}, {}};
    for (const v1::TraceValue& v : p.inputs()) {
      switch (v.value_case()) {
        case v1::TraceValue::kRv:
          if (!defined.count(v.rv())) {
            return InvalidArgumentError(where + ": uses v" + std::to_string(v.rv()) +
                                        " before it is defined");
          }
          inst.inputs.push_back(TraceArg::RV(v.rv()));
          break;
        case v1::TraceValue::kIntValue: inst.inputs.push_back(TraceArg::Int(v.int_value())); break;
        default: inst.inputs.push_back(TraceArg::None()); break;
      }
    }
    inst.int_attrs.assign(p.int_attrs().begin(), p.int_attrs().end());
    inst.float_attrs.assign(p.float_attrs().begin(), p.float_attrs().end());
    inst.str_attrs.assign(p.str_attrs().begin(), p.str_attrs().end());
    for (uint32_t o : p.outputs()) {
      if (!defined.insert(o).second) {
        return InvalidArgumentError(where + ": defines v" + std::to_string(o) + " twice");
      }
      inst.outputs.push_back(o);
    }
    trace.instructions.push_back(std::move(inst));
  }
  for (const v1::Decision& d : proto.decisions()) {
    if (d.instruction() >= trace.instructions.size() ||
        !IsSampling(trace.instructions[d.instruction()].kind)) {
      return InvalidArgumentError("trace decision for instruction " +
                                  std::to_string(d.instruction()) +
                                  ", which is not a sampling instruction");
    }
    trace.decisions[int(d.instruction())].assign(d.values().begin(), d.values().end());
  }
  return trace;
}

std::string TraceToJson(const Trace& trace) {
  v1::Trace proto;
  TraceToProto(trace, &proto);
  std::string json;
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  (void)google::protobuf::util::MessageToJsonString(proto, &json, options);
  return json;
}

StatusOr<Trace> TraceFromJson(std::string_view json) {
  v1::Trace proto;
  auto status = google::protobuf::util::JsonStringToMessage(std::string(json), &proto);
  if (!status.ok()) {
    return InvalidArgumentError("trace JSON does not parse: " + std::string(status.message()));
  }
  return TraceFromProto(proto);
}

}  // namespace tuned::schedule

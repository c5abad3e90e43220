// Replaying a trace: every instruction is re-applied through the checked primitives, so a trace
// that does not fit the workload is an error naming the instruction, never a crash.

#include <unordered_map>

#include "compiler/schedule/schedule.h"

namespace tuned::schedule {

class TraceReplayer {
 public:
  TraceReplayer(Schedule& sch, const std::map<int, std::vector<int64_t>>& decisions)
      : sch_(sch), decisions_(decisions) {}

  Status Apply(int index, const Instruction& inst) {
    std::string where = "trace instruction " + std::to_string(index) + " (" + InstKindName(inst.kind) + ")";
    Status status = ApplyUnchecked(index, inst);
    return status.WithContext(where);
  }

 private:
  StatusOr<uint32_t> Rv(const Instruction& inst, size_t i) {
    if (i >= inst.inputs.size()) return InvalidArgumentError("missing operand " + std::to_string(i));
    const TraceArg& a = inst.inputs[i];
    if (a.kind != TraceArg::Kind::kRV) return InvalidArgumentError("operand " + std::to_string(i) + " is not a variable");
    auto it = rv_map_.find(uint32_t(a.value));
    if (it == rv_map_.end()) return InvalidArgumentError("v" + std::to_string(a.value) + " is not defined");
    return it->second;
  }

  Status Bind(const Instruction& inst, const std::vector<uint32_t>& produced) {
    if (produced.size() != inst.outputs.size()) {
      return InvalidArgumentError("produces " + std::to_string(produced.size()) +
                                  " values, the trace expects " + std::to_string(inst.outputs.size()));
    }
    for (size_t i = 0; i < produced.size(); ++i) rv_map_[inst.outputs[i]] = produced[i];
    return Status::Ok();
  }

  StatusOr<std::vector<LoopRV>> Loops(const Instruction& inst, size_t first) {
    std::vector<LoopRV> loops;
    for (size_t i = first; i < inst.inputs.size(); ++i) {
      TUNED_ASSIGN_OR_RETURN(uint32_t id, Rv(inst, i));
      loops.push_back({id});
    }
    return loops;
  }

  static Status NeedAttrs(const Instruction& inst, size_t ints, size_t strs) {
    if (inst.int_attrs.size() < ints || inst.str_attrs.size() < strs) {
      return InvalidArgumentError("missing attributes");
    }
    return Status::Ok();
  }

  std::optional<std::vector<int64_t>> Decision(int index, const Instruction& inst) const {
    auto it = decisions_.find(index);
    if (it != decisions_.end()) return it->second;
    return std::nullopt;
  }

  Status ApplyUnchecked(int index, const Instruction& inst) {
    switch (inst.kind) {
      case InstKind::kGetBlock: {
        TUNED_RETURN_IF_ERROR(NeedAttrs(inst, 0, 1));
        TUNED_ASSIGN_OR_RETURN(BlockRV b, sch_.GetBlock(inst.str_attrs[0]));
        return Bind(inst, {b.id});
      }
      case InstKind::kGetLoops: {
        TUNED_ASSIGN_OR_RETURN(uint32_t b, Rv(inst, 0));
        TUNED_ASSIGN_OR_RETURN(auto loops, sch_.GetLoops({b}));
        std::vector<uint32_t> ids;
        for (LoopRV l : loops) ids.push_back(l.id);
        return Bind(inst, ids);
      }
      case InstKind::kSplit: {
        TUNED_ASSIGN_OR_RETURN(uint32_t loop, Rv(inst, 0));
        std::vector<Factor> factors;
        for (size_t i = 1; i < inst.inputs.size(); ++i) {
          const TraceArg& a = inst.inputs[i];
          if (a.kind == TraceArg::Kind::kNone) {
            factors.emplace_back(std::monostate{});
          } else if (a.kind == TraceArg::Kind::kInt) {
            factors.emplace_back(a.value);
          } else {
            TUNED_ASSIGN_OR_RETURN(uint32_t id, Rv(inst, i));
            factors.emplace_back(IntRV{id});
          }
        }
        TUNED_ASSIGN_OR_RETURN(auto loops, sch_.Split({loop}, factors));
        std::vector<uint32_t> ids;
        for (LoopRV l : loops) ids.push_back(l.id);
        return Bind(inst, ids);
      }
      case InstKind::kFuse: {
        TUNED_ASSIGN_OR_RETURN(auto loops, Loops(inst, 0));
        TUNED_ASSIGN_OR_RETURN(LoopRV fused, sch_.Fuse(loops));
        return Bind(inst, {fused.id});
      }
      case InstKind::kReorder: {
        TUNED_ASSIGN_OR_RETURN(auto loops, Loops(inst, 0));
        return sch_.Reorder(loops);
      }
      case InstKind::kParallel:
      case InstKind::kVectorize:
      case InstKind::kUnroll:
      case InstKind::kBind:
      case InstKind::kAnnotate: {
        TUNED_ASSIGN_OR_RETURN(uint32_t loop, Rv(inst, 0));
        if (inst.kind == InstKind::kParallel) return sch_.Parallel({loop});
        if (inst.kind == InstKind::kVectorize) return sch_.Vectorize({loop});
        if (inst.kind == InstKind::kUnroll) return sch_.Unroll({loop});
        if (inst.kind == InstKind::kBind) {
          TUNED_RETURN_IF_ERROR(NeedAttrs(inst, 0, 1));
          return sch_.Bind({loop}, inst.str_attrs[0]);
        }
        TUNED_RETURN_IF_ERROR(NeedAttrs(inst, 1, 1));
        return sch_.Annotate({loop}, inst.str_attrs[0], inst.int_attrs[0]);
      }
      case InstKind::kCacheRead: {
        TUNED_RETURN_IF_ERROR(NeedAttrs(inst, 1, 1));
        TUNED_ASSIGN_OR_RETURN(uint32_t b, Rv(inst, 0));
        TUNED_ASSIGN_OR_RETURN(BlockRV out, sch_.CacheRead({b}, int(inst.int_attrs[0]), inst.str_attrs[0]));
        return Bind(inst, {out.id});
      }
      case InstKind::kCacheWrite: {
        TUNED_RETURN_IF_ERROR(NeedAttrs(inst, 0, 1));
        TUNED_ASSIGN_OR_RETURN(uint32_t b, Rv(inst, 0));
        TUNED_ASSIGN_OR_RETURN(BlockRV out, sch_.CacheWrite({b}, inst.str_attrs[0]));
        return Bind(inst, {out.id});
      }
      case InstKind::kRFactor: {
        TUNED_ASSIGN_OR_RETURN(uint32_t b, Rv(inst, 0));
        if (inst.inputs.size() != 2 && inst.inputs.size() != 3) {
          return InvalidArgumentError("rfactor takes a block, a factor and optionally an order");
        }
        RFactorOrder order = RFactorOrder::kLanes;
        if (inst.inputs.size() == 3) {
          if (inst.inputs[2].kind != TraceArg::Kind::kInt || inst.inputs[2].value != 1) {
            return InvalidArgumentError("rfactor's order must be 1 (chunks) when given");
          }
          order = RFactorOrder::kChunks;
        }
        Factor factor;
        if (inst.inputs[1].kind == TraceArg::Kind::kInt) {
          factor = inst.inputs[1].value;
        } else {
          TUNED_ASSIGN_OR_RETURN(uint32_t id, Rv(inst, 1));
          factor = IntRV{id};
        }
        TUNED_ASSIGN_OR_RETURN(BlockRV out, sch_.RFactor({b}, factor, order));
        return Bind(inst, {out.id});
      }
      case InstKind::kComputeAt:
      case InstKind::kReverseComputeAt:
      case InstKind::kDecomposeReduction:
      case InstKind::kBlockLayout: {
        TUNED_ASSIGN_OR_RETURN(uint32_t b, Rv(inst, 0));
        TUNED_ASSIGN_OR_RETURN(uint32_t loop, Rv(inst, 1));
        if (inst.kind == InstKind::kComputeAt) return sch_.ComputeAt({b}, {loop});
        if (inst.kind == InstKind::kReverseComputeAt) return sch_.ReverseComputeAt({b}, {loop});
        if (inst.kind == InstKind::kBlockLayout) return sch_.BlockLayout({b}, {loop});
        return sch_.DecomposeReduction({b}, {loop});
      }
      case InstKind::kComputeInline:
      case InstKind::kReverseComputeInline: {
        TUNED_ASSIGN_OR_RETURN(uint32_t b, Rv(inst, 0));
        if (inst.kind == InstKind::kComputeInline) return sch_.ComputeInline({b});
        return sch_.ReverseComputeInline({b});
      }
      case InstKind::kSamplePerfectTile:
      case InstKind::kSampleTile: {
        const bool padded = inst.kind == InstKind::kSampleTile;
        TUNED_RETURN_IF_ERROR(NeedAttrs(inst, padded ? 3 : 2, 0));
        TUNED_ASSIGN_OR_RETURN(uint32_t loop, Rv(inst, 0));
        const int n = int(inst.int_attrs[0]), max_innermost = int(inst.int_attrs[1]);
        const int min_innermost = padded && inst.int_attrs.size() > 3 ? int(inst.int_attrs[3]) : 1;
        TUNED_ASSIGN_OR_RETURN(auto tiles,
                               padded ? sch_.SampleTile({loop}, n, max_innermost, int(inst.int_attrs[2]),
                                                        Decision(index, inst), min_innermost)
                                      : sch_.SamplePerfectTile({loop}, n, max_innermost, Decision(index, inst)));
        std::vector<uint32_t> ids;
        for (IntRV t : tiles) ids.push_back(t.id);
        return Bind(inst, ids);
      }
      case InstKind::kSampleCategorical: {
        std::optional<int64_t> decision;
        if (auto d = Decision(index, inst)) {
          if (d->size() != 1) return InvalidArgumentError("decision must be one index");
          decision = (*d)[0];
        }
        TUNED_ASSIGN_OR_RETURN(IntRV v, sch_.SampleCategorical(inst.int_attrs, inst.float_attrs, decision));
        return Bind(inst, {v.id});
      }
      case InstKind::kSampleComputeLocation: {
        TUNED_ASSIGN_OR_RETURN(uint32_t b, Rv(inst, 0));
        std::optional<int64_t> decision;
        if (auto d = Decision(index, inst)) {
          if (d->size() != 1) return InvalidArgumentError("decision must be one index");
          decision = (*d)[0];
        }
        TUNED_ASSIGN_OR_RETURN(LoopRV loc, sch_.SampleComputeLocation({b}, decision));
        return Bind(inst, {loc.id});
      }
    }
    return InvalidArgumentError("unknown instruction");
  }

  Schedule& sch_;
  const std::map<int, std::vector<int64_t>>& decisions_;
  std::unordered_map<uint32_t, uint32_t> rv_map_;
};

StatusOr<Schedule> ReplayTrace(std::shared_ptr<const ir::Workload> workload, const Trace& trace,
                               uint64_t seed, const std::map<int, std::vector<int64_t>>& decisions) {
  Schedule sch(std::move(workload), seed);
  std::map<int, std::vector<int64_t>> merged = trace.decisions;
  for (const auto& [index, values] : decisions) merged[index] = values;
  TraceReplayer replayer(sch, merged);
  for (size_t i = 0; i < trace.instructions.size(); ++i) {
    TUNED_RETURN_IF_ERROR(replayer.Apply(int(i), trace.instructions[i]));
  }
  return sch;
}

}  // namespace tuned::schedule

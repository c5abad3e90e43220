#include "compiler/lower/pipeline.h"

#include "compiler/lower/lower.h"

namespace tuned::lower {
namespace {

bool IsAbsent(const v1::Trace& trace) {
  return trace.version() == 0 && trace.instructions_size() == 0 && trace.decisions_size() == 0;
}

StatusOr<LoweredFunc> LowerReplayed(const StatusOr<schedule::Schedule>& replayed, const std::string& name) {
  if (!replayed.ok()) return replayed.status().WithContext("replay");
  StatusOr<LoweredFunc> func = Lower(*replayed, name);
  if (!func.ok()) return func.status().WithContext("lowering");
  return func;
}

}  // namespace

StatusOr<LoweredFunc> LowerTrace(std::shared_ptr<const ir::Workload> workload,
                                 const schedule::Trace& trace, const std::string& name) {
  return LowerReplayed(schedule::ReplayTrace(std::move(workload), trace), name);
}

StatusOr<schedule::Trace> ParseTraceProto(const v1::Trace& trace) {
  if (IsAbsent(trace)) return schedule::Trace();
  StatusOr<schedule::Trace> parsed = schedule::TraceFromProto(trace);
  if (!parsed.ok()) return parsed.status().WithContext("invalid trace");
  return parsed;
}

StatusOr<LoweredFunc> LowerTraceProto(std::shared_ptr<const ir::Workload> workload,
                                      const v1::Trace& trace, const std::string& name) {
  TUNED_ASSIGN_OR_RETURN(schedule::Trace parsed, ParseTraceProto(trace));
  return LowerTrace(std::move(workload), parsed, name);
}

StatusOr<ReplayedCandidate> ReplayAndLower(std::shared_ptr<const ir::Workload> workload,
                                           const schedule::Trace& trace, uint64_t seed,
                                           const std::map<int, std::vector<int64_t>>& decisions) {
  StatusOr<schedule::Schedule> replayed = schedule::ReplayTrace(std::move(workload), trace, seed, decisions);
  TUNED_ASSIGN_OR_RETURN(LoweredFunc func, LowerReplayed(replayed, "kernel"));
  return ReplayedCandidate{replayed->trace(), std::move(func)};
}

StatusOr<LoweredFunc> LowerUnscheduled(std::shared_ptr<const ir::Workload> workload,
                                       const std::string& name) {
  return LowerTrace(std::move(workload), schedule::Trace(), name);
}

StatusOr<schedule::Trace> DefaultScheduleTrace(std::shared_ptr<const ir::Workload> workload) {
  schedule::Schedule sch(workload, /*seed=*/0);
  for (const ir::ComputeStage& stage : workload->stages()) {
    if (stage.axes.empty()) continue;
    TUNED_ASSIGN_OR_RETURN(schedule::BlockRV block, sch.GetBlock(stage.name));
    TUNED_ASSIGN_OR_RETURN(std::vector<schedule::LoopRV> loops, sch.GetLoops(block));
    if (!loops.empty()) TUNED_RETURN_IF_ERROR(sch.Parallel(loops[0]));
  }
  return sch.trace();
}

StatusOr<schedule::Trace> DefaultGpuScheduleTrace(std::shared_ptr<const ir::Workload> workload,
                                                  int64_t threads_per_block) {
  schedule::Schedule sch(workload, /*seed=*/0);
  for (const ir::ComputeStage& stage : workload->stages()) {
    if (stage.axes.empty()) continue;
    TUNED_ASSIGN_OR_RETURN(schedule::BlockRV block, sch.GetBlock(stage.name));
    TUNED_ASSIGN_OR_RETURN(std::vector<schedule::LoopRV> loops, sch.GetLoops(block));
    // The spatial loops come first, the reduction loops after them (the definition's order).
    std::vector<schedule::LoopRV> spatial(loops.begin(), loops.begin() + long(stage.axes.size()));
    schedule::LoopRV fused = spatial.front();
    if (spatial.size() > 1) {
      TUNED_ASSIGN_OR_RETURN(fused, sch.Fuse(spatial));
    }
    TUNED_ASSIGN_OR_RETURN(std::vector<schedule::LoopRV> parts,
                           sch.Split(fused, {std::monostate{}, threads_per_block}));
    TUNED_RETURN_IF_ERROR(sch.Bind(parts[0], "blockIdx.x"));
    TUNED_RETURN_IF_ERROR(sch.Bind(parts[1], "threadIdx.x"));
  }
  return sch.trace();
}

StatusOr<LoweredFunc> LowerDefaultSchedule(std::shared_ptr<const ir::Workload> workload,
                                           const std::string& name) {
  TUNED_ASSIGN_OR_RETURN(schedule::Trace trace, DefaultScheduleTrace(workload));
  return LowerTrace(std::move(workload), trace, name);
}

}  // namespace tuned::lower

#include "compiler/reuse/apply_history_best.h"

#include "common/logging.h"
#include "compiler/codegen/llvm/cpu_target.h"
#include "compiler/lower/lower.h"
#include "compiler/schedule/schedule.h"

namespace tuned::reuse {

bool IsCompatibleTarget(const std::string& target, const std::string& record_target) {
  auto a = codegen::ParseCpuTarget(target);
  auto b = codegen::ParseCpuTarget(record_target);
  if (!a.ok() || !b.ok()) return false;
  return a->triple == b->triple && a->cpu == b->cpu && a->features == b->features;
}

StatusOr<lower::LoweredFunc> DefaultSchedule(std::shared_ptr<const ir::Workload> workload,
                                             const std::string& function_name) {
  schedule::Schedule sch(workload, /*seed=*/0);
  for (const ir::ComputeStage& stage : workload->stages()) {
    TUNED_ASSIGN_OR_RETURN(auto block, sch.GetBlock(stage.name));
    TUNED_ASSIGN_OR_RETURN(auto loops, sch.GetLoops(block));
    if (!loops.empty() && !stage.axes.empty()) TUNED_RETURN_IF_ERROR(sch.Parallel(loops[0]));
  }
  return lower::Lower(sch, function_name);
}

namespace {

// Replays and lowers the first record that still works; returns false if none did.
StatusOr<bool> TryRecords(const ir::Workload& workload, const db::BestRecords& best,
                          const SelectOptions& options, Selection& selection) {
  auto shared = std::make_shared<const ir::Workload>(workload);
  for (const v1::TuningRecord& record : best.records) {
    std::string label = "record " + std::to_string(record.record_id());
    StatusOr<schedule::Trace> trace = schedule::TraceFromProto(record.trace());
    StatusOr<schedule::Schedule> sch = trace.ok() ? schedule::ReplayTrace(shared, *trace)
                                                  : StatusOr<schedule::Schedule>(trace.status());
    StatusOr<lower::LoweredFunc> func = sch.ok() ? lower::Lower(*sch, options.function_name)
                                                 : StatusOr<lower::LoweredFunc>(sch.status());
    if (!func.ok()) {
      selection.warnings.push_back(label + " skipped: its trace does not replay: " +
                                   func.status().message());
      continue;
    }
    selection.func = std::move(func).value();
    selection.from_record = true;
    selection.record_id = record.record_id();
    selection.trace_hash = record.trace_hash();
    selection.record_target = record.target().target();
    selection.median_seconds = record.result().median_seconds();
    return true;
  }
  return false;
}

}  // namespace

StatusOr<Selection> SelectKernel(const ir::Workload& workload, RecordSource& source,
                                 const SelectOptions& options) {
  Selection selection;
  TUNED_ASSIGN_OR_RETURN(db::BestRecords best,
                         source.Best(workload.key(), options.target, options.max_records));
  TUNED_ASSIGN_OR_RETURN(bool found, TryRecords(workload, best, options, selection));
  std::string reason = best.records.empty() ? best.miss_reason : "no record of it replays";
  if (!found && options.allow_compatible_target) {
    TUNED_ASSIGN_OR_RETURN(std::vector<std::string> targets, source.Targets(workload.key()));
    for (const std::string& other : targets) {
      if (other == options.target || !IsCompatibleTarget(options.target, other)) continue;
      TUNED_ASSIGN_OR_RETURN(db::BestRecords near, source.Best(workload.key(), other, options.max_records));
      TUNED_ASSIGN_OR_RETURN(found, TryRecords(workload, near, options, selection));
      if (found) {
        selection.warnings.push_back("no record for target '" + options.target +
                                     "'; using record " + std::to_string(selection.record_id) +
                                     " of compatible target '" + other + "'");
        break;
      }
    }
  }
  if (found) return selection;
  selection.fallback_reason = reason.empty() ? "no usable record" : reason;
  selection.warnings.push_back("no tuned schedule for " + workload.key() + " on '" + options.target +
                               "' (" + selection.fallback_reason + "); using the default schedule");
  TUNED_ASSIGN_OR_RETURN(selection.func,
                         DefaultSchedule(std::make_shared<const ir::Workload>(workload), options.function_name));
  return selection;
}

}  // namespace tuned::reuse

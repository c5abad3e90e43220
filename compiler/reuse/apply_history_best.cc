#include "compiler/reuse/apply_history_best.h"

#include "common/logging.h"
#include "compiler/codegen/llvm/codegen_llvm.h"
#include "compiler/codegen/llvm/cpu_target.h"
#include "compiler/ir/tdl/definition.h"
#include "compiler/lower/pipeline.h"
#include "proto/measure_config.h"

namespace tuned::reuse {

bool IsCompatibleTarget(const std::string& target, const std::string& record_target) {
  auto a = codegen::ParseCpuTarget(target);
  auto b = codegen::ParseCpuTarget(record_target);
  if (!a.ok() || !b.ok()) return false;
  return a->triple == b->triple && a->cpu == b->cpu && a->features == b->features;
}

namespace {

// Replays and lowers the first record that still works; returns false if none did.
StatusOr<bool> TryRecords(const ir::Workload& workload, const db::BestRecords& best,
                          const SelectOptions& options, Selection& selection) {
  auto shared = std::make_shared<const ir::Workload>(workload);
  for (const v1::TuningRecord& record : best.records) {
    std::string label = "record " + std::to_string(record.record_id());
    StatusOr<lower::LoweredFunc> func = lower::LowerTraceProto(shared, record.trace(), options.function_name);
    if (!func.ok()) {
      selection.warnings.push_back(label + " skipped: " + func.status().message());
      continue;
    }
    if (std::string older = OlderCodegenWarning(record); !older.empty()) selection.warnings.push_back(older);
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
  // Records timed with the LLVM this build generates code with, or with an unknown one.
  const std::string toolkit = codegen::LlvmToolkitVersion();
  auto best_of = [&](const std::string& key, const std::string& target) {
    return BestOfNewestVersions(source, key, target, options.max_records, toolkit, v1::kMeasureProtocolVersion);
  };
  TUNED_ASSIGN_OR_RETURN(db::BestRecords best, best_of(workload.key(), options.target));
  TUNED_ASSIGN_OR_RETURN(bool found, TryRecords(workload, best, options, selection));
  std::string reason = best.records.empty() ? best.miss_reason : "no record of it replays";
  if (!found && options.allow_compatible_target) {
    TUNED_ASSIGN_OR_RETURN(std::vector<std::string> targets, source.Targets(workload.key()));
    for (const std::string& other : targets) {
      if (other == options.target || !IsCompatibleTarget(options.target, other)) continue;
      TUNED_ASSIGN_OR_RETURN(db::BestRecords near, best_of(workload.key(), other));
      TUNED_ASSIGN_OR_RETURN(found, TryRecords(workload, near, options, selection));
      if (found) {
        selection.warnings.push_back("no record for target '" + options.target +
                                     "'; using record " + std::to_string(selection.record_id) +
                                     " of compatible target '" + other + "'");
        break;
      }
    }
  }
  if (const std::string unmarked_key = ir::KeyWithoutConstants(workload); !found && unmarked_key != workload.key()) {
    // The same computation, tuned before its weights were marked constant: its schedules
    // replay here (they pack nothing ahead, and time the same).
    TUNED_ASSIGN_OR_RETURN(db::BestRecords unmarked, best_of(unmarked_key, options.target));
    TUNED_ASSIGN_OR_RETURN(found, TryRecords(workload, unmarked, options, selection));
    if (found) {
      selection.warnings.push_back("using record " + std::to_string(selection.record_id) +
                                   " of the same workload without its constant inputs marked");
    }
  }
  if (found) return selection;
  selection.fallback_reason = reason.empty() ? "no usable record" : reason;
  selection.warnings.push_back("no tuned schedule for " + workload.key() + " on '" + options.target +
                               "' (" + selection.fallback_reason + "); using the default schedule");
  TUNED_ASSIGN_OR_RETURN(selection.func, lower::LowerDefaultSchedule(std::make_shared<const ir::Workload>(workload),
                                                                    options.function_name));
  return selection;
}

}  // namespace tuned::reuse

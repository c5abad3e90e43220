#ifndef TUNED_COMPILER_REUSE_APPLY_HISTORY_BEST_H_
#define TUNED_COMPILER_REUSE_APPLY_HISTORY_BEST_H_

/// \file
/// Apply-history-best: the kernel of a workload for a target is the best recorded schedule in
/// the tuning log, among the records of the newest code generation and timing protocol the log
/// holds for it (reuse::BestOfNewestVersions). Records are tried best first; one whose trace no longer replays (written by
/// an incompatible version, say) is skipped with a warning. With no usable record the kernel
/// is the default schedule (compiler/lower/pipeline.h), and the selection says why, so that a
/// miss is never silent.

#include <string>
#include <vector>

#include "common/status.h"
#include "compiler/ir/workload.h"
#include "compiler/lower/lowered_func.h"
#include "compiler/reuse/record_source.h"

namespace tuned::reuse {

struct SelectOptions {
  /// Canonical target string the kernel is for.
  std::string target;
  /// Also accept records of another target with the same ISA and features (the number of
  /// cores may differ); the exact target is always preferred.
  bool allow_compatible_target = false;
  /// Records tried before falling back.
  int max_records = 8;
  /// Name of the generated function.
  std::string function_name = "kernel";
};

struct Selection {
  lower::LoweredFunc func;
  bool from_record = false;
  int64_t record_id = 0;          // the record used, when from_record
  std::string trace_hash;         // its trace's hash
  std::string record_target;      // the target it was measured on
  double median_seconds = 0;      // its measured time
  std::string fallback_reason;    // why the default schedule was used, when !from_record
  std::vector<std::string> warnings;
};

StatusOr<Selection> SelectKernel(const ir::Workload& workload, RecordSource& source,
                                 const SelectOptions& options);

/// Whether records measured on `record_target` may serve `target`: same triple, CPU and
/// features (core counts may differ).
bool IsCompatibleTarget(const std::string& target, const std::string& record_target);

}  // namespace tuned::reuse

#endif  // TUNED_COMPILER_REUSE_APPLY_HISTORY_BEST_H_

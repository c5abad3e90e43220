#ifndef TUNED_OBSERVABILITY_CURVE_TUNING_CURVE_H_
#define TUNED_OBSERVABILITY_CURVE_TUNING_CURVE_H_

/// \file
/// Tuning curves: a task's records, in the order they were stored, as best-so-far throughput
/// against trials and against time. The one place that turns records into the points the
/// status page draws and `tuned db plot` writes.

#include <span>
#include <string>
#include <vector>

#include "tuned/v1/record.pb.h"

namespace tuned::observability {

struct CurvePoint {
  int trial = 0;             // 1-based position among the curve's records
  double seconds = 0;        // since the curve's first record was stored
  double gflops = 0;         // this trial's throughput, GFLOP/s; 0 unless it measured OK
  double best_gflops = 0;    // best OK throughput up to and including this trial; 0 before one
  v1::MeasureStatus status = v1::MEASURE_STATUS_UNSPECIFIED;
};

struct TuningCurve {
  std::string task_id;  // empty for imported records (no task)
  std::string workload_key;
  std::string target;
  std::vector<CurvePoint> points;
  /// The task's best as the task ranks it (tuning_db/ranking/record_ranking.h): a re-measure's figure
  /// replaces its trial's, so this may differ from the last point's best so far.
  double best_gflops = 0;

  /// "task <first 8 hex digits>", or "imported" for records without a task.
  std::string label() const;
};

/// Throughput of a record, GFLOP/s: the workload's flops over the median; 0 unless OK.
double RecordGflops(const v1::TuningRecord& record);

/// One curve of `records` taken in the given order (all of one task): a point per trial
/// (re-measures are not trials), and the task's best over all of them.
TuningCurve CurveOf(std::span<const v1::TuningRecord> records);

/// One curve per (task, workload, target) of `records`, each in the records' order, the
/// curves in the order their first record appears.
std::vector<TuningCurve> CurvesByTask(std::span<const v1::TuningRecord> records);

/// "OK", "COMPILE_ERROR", ...: the status without its enum prefix.
std::string StatusLabel(v1::MeasureStatus status);

}  // namespace tuned::observability

#endif  // TUNED_OBSERVABILITY_CURVE_TUNING_CURVE_H_

#include "observability/curve/tuning_curve.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "tuning_db/ranking/record_ranking.h"

namespace tuned::observability {

std::string TuningCurve::label() const {
  return task_id.empty() ? "imported" : "task " + task_id.substr(0, 8);
}

double RecordGflops(const v1::TuningRecord& record) {
  const double seconds = record.result().median_seconds();
  if (record.result().status() != v1::MEASURE_STATUS_OK || seconds <= 0) return 0;
  return record.workload().flops() / seconds / 1e9;
}

TuningCurve CurveOf(std::span<const v1::TuningRecord> records) {
  TuningCurve curve;
  if (records.empty()) return curve;
  curve.task_id = records.front().task_id();
  curve.workload_key = records.front().workload().key();
  curve.target = records.front().target().target();
  const int64_t first_ms = records.front().created_unix_ms();
  double best = 0;
  for (const v1::TuningRecord& record : records) {
    // A curve is the task's trials: re-measures of traces it already tried are not points.
    if (record.kind() == v1::RECORD_KIND_REMEASURE || record.kind() == v1::RECORD_KIND_FINAL) continue;
    CurvePoint point;
    point.trial = int(curve.points.size()) + 1;
    point.seconds = std::max<int64_t>(record.created_unix_ms() - first_ms, 0) / 1000.0;
    point.gflops = RecordGflops(record);
    best = std::max(best, point.gflops);
    point.best_gflops = best;
    point.status = record.result().status();
    curve.points.push_back(point);
  }
  // The records do not say the task's noise threshold; a noisy trial was re-measured, and the
  // re-measure supersedes it whatever the threshold.
  const std::vector<const v1::TuningRecord*> ranked = db::RankTraces(records, v1::RemeasureOptions());
  if (!ranked.empty()) curve.best_gflops = RecordGflops(*ranked.front());
  return curve;
}

std::vector<TuningCurve> CurvesByTask(std::span<const v1::TuningRecord> records) {
  using Key = std::tuple<std::string, std::string, std::string>;
  std::map<Key, std::vector<v1::TuningRecord>> groups;
  std::vector<Key> order;
  for (const v1::TuningRecord& record : records) {
    Key key{record.task_id(), record.workload().key(), record.target().target()};
    auto [it, inserted] = groups.try_emplace(key);
    if (inserted) order.push_back(key);
    it->second.push_back(record);
  }
  std::vector<TuningCurve> curves;
  for (const Key& key : order) curves.push_back(CurveOf(groups.at(key)));
  return curves;
}

std::string StatusLabel(v1::MeasureStatus status) {
  std::string name = v1::MeasureStatus_Name(status);
  const std::string prefix = "MEASURE_STATUS_";
  return name.starts_with(prefix) ? name.substr(prefix.size()) : name;
}

}  // namespace tuned::observability

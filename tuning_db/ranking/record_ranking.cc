#include "tuning_db/ranking/record_ranking.h"

#include <algorithm>
#include <map>
#include <string>

namespace tuned::db {

bool IsNoisy(const v1::MeasureResult& result, const v1::RemeasureOptions& options) {
  return result.status() == v1::MEASURE_STATUS_OK && options.noise_cv_threshold() > 0 &&
         result.repeat_cv() > options.noise_cv_threshold();
}

std::vector<const v1::TuningRecord*> RankTraces(std::span<const v1::TuningRecord> records,
                                                const v1::RemeasureOptions& options) {
  std::map<std::string, int> latest_kind;  // per trace, over every status
  bool any_final = false;
  for (const v1::TuningRecord& record : records) {
    int& kind = latest_kind.try_emplace(record.trace_hash(), 0).first->second;
    kind = std::max(kind, int(record.kind()));
    if (record.kind() == v1::RECORD_KIND_FINAL &&
        record.result().status() == v1::MEASURE_STATUS_OK) {
      any_final = true;
    }
  }
  std::map<std::string, const v1::TuningRecord*> fastest;
  for (const v1::TuningRecord& record : records) {
    if (record.result().status() != v1::MEASURE_STATUS_OK) continue;
    if (int(record.kind()) != latest_kind[record.trace_hash()]) continue;
    if (any_final && record.kind() != v1::RECORD_KIND_FINAL) continue;
    if (record.kind() == v1::RECORD_KIND_SEARCH && IsNoisy(record.result(), options)) continue;
    const v1::TuningRecord*& best = fastest[record.trace_hash()];
    if (best == nullptr || record.result().median_seconds() < best->result().median_seconds()) {
      best = &record;
    }
  }
  std::vector<const v1::TuningRecord*> ranked;
  for (const auto& [hash, record] : fastest) ranked.push_back(record);
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto* a, const auto* b) {
    if (a->result().median_seconds() != b->result().median_seconds()) {
      return a->result().median_seconds() < b->result().median_seconds();
    }
    return a->record_id() < b->record_id();
  });
  return ranked;
}

}  // namespace tuned::db

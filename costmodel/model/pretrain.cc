#include "costmodel/model/pretrain.h"

#include <map>

#include "compiler/ir/op_library.h"
#include "compiler/lower/lower.h"
#include "compiler/schedule/schedule.h"
#include "compiler/schedule/trace.h"

namespace tuned::costmodel {

StatusOr<std::vector<float>> FeaturizeTrace(std::shared_ptr<const ir::Workload> workload,
                                            const v1::Trace& trace,
                                            const FeatureOptions& options) {
  TUNED_ASSIGN_OR_RETURN(schedule::Trace parsed, schedule::TraceFromProto(trace));
  TUNED_ASSIGN_OR_RETURN(schedule::Schedule sch, schedule::ReplayTrace(std::move(workload), parsed));
  TUNED_ASSIGN_OR_RETURN(lower::LoweredFunc func, lower::Lower(sch));
  return ExtractFeatures(func, options);
}

std::optional<double> RecordThroughput(const v1::TuningRecord& record, double workload_flops) {
  switch (record.result().status()) {
    case v1::MEASURE_STATUS_OK: {
      const double flops = record.workload().flops() > 0 ? record.workload().flops() : workload_flops;
      const double median = record.result().median_seconds();
      if (!(median > 0) || !(flops > 0)) return std::nullopt;
      return flops / median;
    }
    case v1::MEASURE_STATUS_RUNTIME_ERROR:
    case v1::MEASURE_STATUS_WRONG_RESULT:
    case v1::MEASURE_STATUS_TIMEOUT:
      return 0.0;
    default:
      return std::nullopt;
  }
}

StatusOr<PretrainStats> PretrainFromDatabase(db::Database& db, const std::string& target,
                                             CostModel& model, const PretrainOptions& options) {
  PretrainStats stats;
  std::map<std::string, std::shared_ptr<const ir::Workload>> workloads;  // null: not a spec
  std::vector<std::vector<float>> features;
  std::vector<double> throughputs;
  std::vector<std::string> groups;
  db::RecordFilter filter;
  filter.target = target;
  while (stats.records < options.max_records) {
    TUNED_ASSIGN_OR_RETURN(std::vector<v1::TuningRecord> page, db.ListRecords(filter));
    if (page.empty()) break;
    filter.after_id = page.back().record_id();
    for (const v1::TuningRecord& record : page) {
      if (stats.records >= options.max_records) break;
      ++stats.records;
      const std::string& key = record.workload().key();
      auto it = workloads.find(key);
      if (it == workloads.end()) {
        StatusOr<ir::Workload> parsed = ir::ParseWorkloadSpec(key);
        it = workloads
                 .emplace(key, parsed.ok() ? std::make_shared<const ir::Workload>(
                                                 std::move(parsed).value())
                                           : nullptr)
                 .first;
      }
      if (!it->second) {
        ++stats.skipped_workload;
        continue;
      }
      std::optional<double> throughput = RecordThroughput(record, it->second->flops());
      if (!throughput) {
        ++stats.skipped_no_label;
        continue;
      }
      StatusOr<std::vector<float>> f = FeaturizeTrace(it->second, record.trace(), options.features);
      if (!f.ok()) {
        ++stats.skipped_replay;
        continue;
      }
      features.push_back(std::move(f).value());
      throughputs.push_back(*throughput);
      groups.push_back(key);
    }
  }
  if (!features.empty()) TUNED_RETURN_IF_ERROR(model.Update(features, throughputs, groups));
  stats.samples = int64_t(features.size());
  return stats;
}

}  // namespace tuned::costmodel

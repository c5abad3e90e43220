#include "costmodel/model/pretrain.h"

#include <map>

#include "compiler/ir/op_library.h"
#include "compiler/lower/gpu/lower_gpu.h"
#include "compiler/lower/lower.h"
#include "compiler/lower/pipeline.h"

namespace tuned::costmodel {

StatusOr<std::vector<float>> FeaturizeTrace(std::shared_ptr<const ir::Workload> workload,
                                            const v1::Trace& trace,
                                            const FeatureOptions& options) {
  if (!options.gpu) {
    TUNED_ASSIGN_OR_RETURN(lower::LoweredFunc func, lower::LowerTraceProto(std::move(workload), trace));
    return ExtractFeatures(func, options);
  }
  // Lowered as the search's candidate check lowers a GPU candidate, so that a stored record's
  // features are the ones the search scored it with.
  TUNED_ASSIGN_OR_RETURN(schedule::Trace parsed, lower::ParseTraceProto(trace));
  TUNED_ASSIGN_OR_RETURN(schedule::Schedule sch, schedule::ReplayTrace(std::move(workload), parsed));
  TUNED_ASSIGN_OR_RETURN(lower::LoweredFunc func, lower::Lower(sch, "kernel", {.hoist_guards = false}));
  TUNED_ASSIGN_OR_RETURN(lower::gpu::GpuProgram program, lower::gpu::LowerGpu(sch, lower::gpu::NoGpuLimits()));
  return ExtractFeatures(func, program, options);
}

namespace {

double RecordFlops(const v1::TuningRecord& record, double workload_flops) {
  return record.workload().flops() > 0 ? record.workload().flops() : workload_flops;
}

}  // namespace

std::optional<double> RecordThroughput(const v1::TuningRecord& record, double workload_flops) {
  return TrainingThroughput(record.result(), RecordFlops(record, workload_flops));
}

StatusOr<PretrainStats> PretrainFromDatabase(db::RecordStore& db, const std::string& target,
                                             CostModel& model, const PretrainOptions& options) {
  PretrainStats stats;
  std::map<std::string, std::shared_ptr<const ir::Workload>> workloads;  // null: not a spec
  std::vector<MeasuredSample> samples;
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
      // Checked before the costly replay; Update applies the same rule again.
      if (!RecordThroughput(record, it->second->flops())) {
        ++stats.skipped_no_label;
        continue;
      }
      StatusOr<std::vector<float>> f = FeaturizeTrace(it->second, record.trace(), options.features);
      if (!f.ok()) {
        ++stats.skipped_replay;
        continue;
      }
      samples.push_back({std::move(f).value(), key, RecordFlops(record, it->second->flops()), record.result()});
    }
  }
  TUNED_RETURN_IF_ERROR(model.Update(samples));
  stats.samples = int64_t(samples.size());
  return stats;
}

}  // namespace tuned::costmodel

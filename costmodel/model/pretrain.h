#ifndef TUNED_COSTMODEL_MODEL_PRETRAIN_H_
#define TUNED_COSTMODEL_MODEL_PRETRAIN_H_

/// \file
/// Training the cost model from records already in the tuning database: each record's trace is
/// replayed on its workload, lowered and featurized, and its result goes to CostModel::Update,
/// which labels it by the one rule (cost_model.h). This is how a new task on a target reuses what earlier tasks measured.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "compiler/ir/workload.h"
#include "costmodel/features/features.h"
#include "costmodel/model/cost_model.h"
#include "tuned/v1/record.pb.h"
#include "tuning_db/record_store.h"

namespace tuned::costmodel {

/// The features of the candidate `trace` describes: replay on `workload`, lower, extract; on a
/// GPU target (`options.gpu` set) also lowered to kernels, for the GPU block, as the search's
/// candidate check lowers it. Errors are the replay's or lowering's (InvalidArgument for a
/// trace that does not apply).
StatusOr<std::vector<float>> FeaturizeTrace(std::shared_ptr<const ir::Workload> workload,
                                            const v1::Trace& trace,
                                            const FeatureOptions& options = {});

/// The training label of a measured record: TrainingThroughput (cost_model.h) of its result,
/// with the flops of the record's workload, else `workload_flops`.
std::optional<double> RecordThroughput(const v1::TuningRecord& record, double workload_flops);

struct PretrainOptions {
  FeatureOptions features;
  /// Read at most this many records (newest are not preferred: row-id order).
  int64_t max_records = 200000;
};

struct PretrainStats {
  int64_t records = 0;             // records read for the target
  int64_t samples = 0;             // added to the model
  int64_t skipped_no_label = 0;    // compile errors, lost workers
  int64_t skipped_workload = 0;    // workload key rebuilds nothing (a C++-built custom compute)
  int64_t skipped_replay = 0;      // trace no longer replays or lowers
};

/// Adds every usable record of `target` to `model` in one Update. A database error is returned;
/// records that cannot be used are counted in the stats, not errors.
StatusOr<PretrainStats> PretrainFromDatabase(db::RecordStore& db, const std::string& target,
                                             CostModel& model, const PretrainOptions& options = {});

}  // namespace tuned::costmodel

#endif  // TUNED_COSTMODEL_MODEL_PRETRAIN_H_

#ifndef TUNED_COSTMODEL_MODEL_COST_MODEL_H_
#define TUNED_COSTMODEL_MODEL_COST_MODEL_H_

/// \file
/// The cost model ranks candidates the search has not measured yet. Lifecycle:
///   1. create one per target (MakeXgbCostModel), optionally load the target's snapshot from the
///      tuning database (snapshot.h) or pre-train it from stored records (pretrain.h);
///   2. the search scores a population with Predict (one call per batch, feature vectors from
///      costmodel/features/features.h);
///   3. after each measured batch the search calls Update with the results, which labels them
///      (the rule below); the model keeps every sample and retrains;
///   4. Serialize gives the blob the database stores (snapshot.h).
/// A model is not thread-safe: one search task drives it.
///
/// The labelling rule — the only one; every learner (the evolutionary search after each batch,
/// pre-training from the database) hands Update measured results and never labels them itself:
///   - MEASURE_STATUS_OK with a positive median: throughput = workload flops / median seconds;
///   - RUNTIME_ERROR, WRONG_RESULT, TIMEOUT (the candidate was built and ran, and is unusable or
///     too slow): throughput 0;
///   - COMPILE_ERROR, WORKER_LOST, UNSPECIFIED, and OK without a positive median or without a
///     positive flop count: skipped (they say nothing about the candidate's speed).
/// Normalisation (XGBoost model): samples are grouped by workload key; each sample's throughput
/// is divided by the largest throughput of its group, so 1 is the best candidate seen for that
/// workload and 0 a failed one (MetaSchedule's normalisation). Scores are comparable within one
/// workload only.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "tuned/v1/measure.pb.h"

namespace tuned::costmodel {

/// One measured candidate, as the model learns from it.
struct MeasuredSample {
  std::vector<float> features;  // of the candidate's lowered program (features.h)
  std::string workload_key;     // groups samples for normalisation
  double workload_flops = 0;    // floating-point operations of one run of the workload
  v1::MeasureResult result;     // what measuring the candidate gave
};

/// The labelling rule above: the throughput a result teaches (flops per second, 0 for a
/// candidate that ran and failed), or nullopt for a result that is skipped.
std::optional<double> TrainingThroughput(const v1::MeasureResult& result, double workload_flops);

class CostModel {
 public:
  virtual ~CostModel() = default;
  /// Learns from measured candidates: labels each with TrainingThroughput, drops the skipped
  /// ones and calls UpdateLabelled with the rest (nothing when none is left). Errors are
  /// UpdateLabelled's.
  Status Update(const std::vector<MeasuredSample>& samples);
  /// Scores, higher = predicted faster; comparable within one workload. Every vector must have
  /// FeatureCount() values (InvalidArgument otherwise). An untrained model scores 0.
  virtual StatusOr<std::vector<double>> Predict(const std::vector<std::vector<float>>& features) = 0;
  /// Adds already-labelled samples (throughputs as TrainingThroughput gives them) and retrains.
  /// `group_keys` (the workload keys) group samples for per-workload normalisation. For data
  /// sets labelled in advance (tests, benchmarks); a search learns through Update.
  /// InvalidArgument when the three vectors differ in length, a feature vector has the wrong
  /// length, or a throughput is negative or not finite; nothing is added then.
  virtual Status UpdateLabelled(const std::vector<std::vector<float>>& features,
                        const std::vector<double>& throughputs,
                        const std::vector<std::string>& group_keys) = 0;
  /// Samples the model holds (and was last trained on, when trained).
  virtual int64_t num_samples() const = 0;
  /// The snapshot blob; see the implementation's format for what it contains.
  virtual StatusOr<std::string> Serialize() const = 0;
  /// Replaces this model's state with a blob from Serialize of a model of the same format().
  /// DataLoss for a damaged blob, FailedPrecondition for one of another feature version.
  virtual Status Deserialize(const std::string& blob) = 0;
  /// The blob format, stored with snapshots, e.g. "tuned-xgb-v1".
  virtual std::string format() const = 0;
};

/// How the XGBoost model turns normalised throughputs into trees.
enum class XgbObjective {
  /// reg:squarederror on the normalised throughput (MetaSchedule's label, plain squared loss).
  kRegression,
  /// rank:pairwise with one query group per workload: only the order within a workload counts.
  kPairwiseRank,
};

struct XgbOptions {
  /// Default chosen by bench/costmodel_bench (held-out Spearman and top-k recall on measured
  /// matmul and conv2d candidates); see docs/costmodel.md.
  XgbObjective objective = XgbObjective::kRegression;
  /// Boosting rounds per (re)training; every Update retrains from scratch on all samples.
  int num_rounds = 60;
  int max_depth = 6;
  double eta = 0.2;
  double gamma = 0.001;
  /// 1 stops splits down to single samples (MetaSchedule's 0 makes every tree full-depth, which
  /// cost 10x the training time here for no held-out gain).
  double min_child_weight = 1;
  /// Histogram bins per feature (tree_method "hist"); features are mostly small integers/logs.
  int max_bin = 64;
  /// Threads XGBoost may use; the search runs beside measurement, so keep it small.
  int nthread = 1;
  uint64_t seed = 43;
  /// Below this many samples (or with a single distinct label) the model stays untrained.
  int64_t min_samples_to_train = 16;
  /// Oldest samples beyond this count are dropped (bounds memory, snapshot size and training).
  int64_t max_samples = 50000;
};

/// The XGBoost model ("tuned-xgb-v1" blobs: the booster as XGBoost JSON plus every training
/// sample, so a loaded snapshot keeps training). InvalidArgument for bad options.
StatusOr<std::unique_ptr<CostModel>> MakeXgbCostModel(const XgbOptions& options = {});

/// Uniform random scores in [0, 1) from `seed`; Update only counts samples. The baseline the
/// learned model must beat in tests and benchmarks ("random-v1" blobs: the sample count).
std::unique_ptr<CostModel> MakeRandomCostModel(uint64_t seed);

/// Checks that every vector has FeatureCount() values; the error names the first bad index.
Status CheckFeatureVectors(const std::vector<std::vector<float>>& features);

/// Checks the arguments of CostModel::UpdateLabelled: one throughput and one group key per feature
/// vector, and CheckFeatureVectors.
Status CheckUpdateArguments(const std::vector<std::vector<float>>& features,
                            const std::vector<double>& throughputs,
                            const std::vector<std::string>& group_keys);

}  // namespace tuned::costmodel

#endif  // TUNED_COSTMODEL_MODEL_COST_MODEL_H_

#include "costmodel/model/cost_model.h"

#include <cmath>

#include "costmodel/features/features.h"

namespace tuned::costmodel {

std::optional<double> TrainingThroughput(const v1::MeasureResult& result, double workload_flops) {
  switch (result.status()) {
    case v1::MEASURE_STATUS_OK:
      if (!(result.median_seconds() > 0) || !(workload_flops > 0)) return std::nullopt;
      return workload_flops / result.median_seconds();
    case v1::MEASURE_STATUS_RUNTIME_ERROR:
    case v1::MEASURE_STATUS_WRONG_RESULT:
    case v1::MEASURE_STATUS_TIMEOUT:
    // A build that outlasts its budget never yields a kernel either (10 of a 64-trial stem
    // tune's candidates did): the model should learn to rank such candidates low.
    case v1::MEASURE_STATUS_BUILD_TIMEOUT:
      return 0.0;
    default:
      return std::nullopt;
  }
}

Status CostModel::Update(const std::vector<MeasuredSample>& samples) {
  std::vector<std::vector<float>> features;
  std::vector<double> throughputs;
  std::vector<std::string> groups;
  for (const MeasuredSample& sample : samples) {
    std::optional<double> throughput = TrainingThroughput(sample.result, sample.workload_flops);
    if (!throughput) continue;
    features.push_back(sample.features);
    throughputs.push_back(*throughput);
    groups.push_back(sample.workload_key);
  }
  if (features.empty()) return Status::Ok();
  return UpdateLabelled(features, throughputs, groups);
}

Status CheckFeatureVectors(const std::vector<std::vector<float>>& features) {
  const size_t expected = size_t(FeatureCount());
  for (size_t i = 0; i < features.size(); ++i) {
    if (features[i].size() != expected) {
      return InvalidArgumentError("feature vector " + std::to_string(i) + " has " +
                                  std::to_string(features[i].size()) + " values, expected " +
                                  std::to_string(expected) + " (feature version " +
                                  std::to_string(kFeatureVersion) + ")");
    }
    for (size_t j = 0; j < expected; ++j) {
      if (!std::isfinite(features[i][j])) {
        return InvalidArgumentError("feature vector " + std::to_string(i) + ": value " +
                                    std::to_string(j) + " (" + FeatureNames()[j] +
                                    ") is not finite");
      }
    }
  }
  return Status::Ok();
}

Status CheckUpdateArguments(const std::vector<std::vector<float>>& features,
                            const std::vector<double>& throughputs,
                            const std::vector<std::string>& group_keys) {
  if (features.size() != throughputs.size() || features.size() != group_keys.size()) {
    return InvalidArgumentError("update: " + std::to_string(features.size()) +
                                " feature vectors, " + std::to_string(throughputs.size()) +
                                " throughputs, " + std::to_string(group_keys.size()) +
                                " group keys; they must match");
  }
  return CheckFeatureVectors(features);
}

}  // namespace tuned::costmodel

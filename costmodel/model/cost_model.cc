#include "costmodel/model/cost_model.h"

#include <cmath>

#include "costmodel/features/features.h"

namespace tuned::costmodel {

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

}  // namespace tuned::costmodel

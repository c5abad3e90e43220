#include <random>

#include "costmodel/model/cost_model.h"

namespace tuned::costmodel {
namespace {

class RandomCostModel : public CostModel {
 public:
  explicit RandomCostModel(uint64_t seed) : rng_(seed) {}

  StatusOr<std::vector<double>> Predict(const std::vector<std::vector<float>>& features) override {
    TUNED_RETURN_IF_ERROR(CheckFeatureVectors(features));
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    std::vector<double> scores(features.size());
    for (double& s : scores) s = uniform(rng_);
    return scores;
  }

  Status UpdateLabelled(const std::vector<std::vector<float>>& features,
                        const std::vector<double>& throughputs,
                        const std::vector<std::string>& group_keys) override {
    TUNED_RETURN_IF_ERROR(CheckUpdateArguments(features, throughputs, group_keys));
    num_samples_ += int64_t(features.size());
    return Status::Ok();
  }

  int64_t num_samples() const override { return num_samples_; }

  StatusOr<std::string> Serialize() const override { return std::to_string(num_samples_); }

  Status Deserialize(const std::string& blob) override {
    int64_t n = 0;
    for (char c : blob) {
      if (c < '0' || c > '9') return DataLossError("random-v1 blob is not a sample count");
      n = n * 10 + (c - '0');
    }
    if (blob.empty()) return DataLossError("random-v1 blob is empty");
    num_samples_ = n;
    return Status::Ok();
  }

  std::string format() const override { return "random-v1"; }

 private:
  std::mt19937_64 rng_;
  int64_t num_samples_ = 0;
};

}  // namespace

std::unique_ptr<CostModel> MakeRandomCostModel(uint64_t seed) {
  return std::make_unique<RandomCostModel>(seed);
}

}  // namespace tuned::costmodel

// The XGBoost cost model: learns a ranking, round-trips through its blob, rejects bad input.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>

#include "costmodel/features/features.h"
#include "costmodel/model/cost_model.h"
#include "costmodel/model/metrics.h"

namespace tuned::costmodel {
namespace {

using ::testing::HasSubstr;

// Synthetic candidates: random feature vectors whose "throughput" depends on a few features
// (one monotone, one with an optimum, one interaction), scaled per workload group.
struct Synthetic {
  std::vector<std::vector<float>> features;
  std::vector<double> throughputs;
  std::vector<std::string> groups;
};

Synthetic MakeSynthetic(int n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> uniform(0.f, 8.f);
  Synthetic s;
  for (int i = 0; i < n; ++i) {
    std::vector<float> f(static_cast<size_t>(FeatureCount()));
    for (float& v : f) v = uniform(rng);
    double t = 1.0 + f[3] + 0.5 * (8.0 - std::fabs(f[20] - 4.0) * 2.0) + (f[50] > 4.f ? f[7] : 0.0);
    const bool big = i % 2 == 0;
    s.features.push_back(std::move(f));
    s.throughputs.push_back(t * (big ? 1e9 : 1e6));  // two workloads of very different speed
    s.groups.push_back(big ? "matmul(M=1024)" : "conv2d(N=1)");
  }
  return s;
}

std::unique_ptr<CostModel> NewXgb(XgbObjective objective = XgbObjective::kRegression) {
  XgbOptions options;
  options.objective = objective;
  auto model = MakeXgbCostModel(options);
  EXPECT_TRUE(model.ok()) << model.status().ToString();
  return std::move(model).value();
}

// Spearman correlation within each group, averaged.
double GroupSpearman(const Synthetic& data, const std::vector<double>& scores) {
  double total = 0;
  int groups = 0;
  for (const std::string key : {"matmul(M=1024)", "conv2d(N=1)"}) {
    std::vector<double> truth, predicted;
    for (size_t i = 0; i < data.groups.size(); ++i) {
      if (data.groups[i] != key) continue;
      truth.push_back(data.throughputs[i]);
      predicted.push_back(scores[i]);
    }
    total += SpearmanCorrelation(truth, predicted);
    ++groups;
  }
  return total / groups;
}

TEST(XgbCostModel, UntrainedPredictsZero) {
  auto model = NewXgb();
  Synthetic data = MakeSynthetic(5, 1);
  auto scores = model->Predict(data.features);
  ASSERT_TRUE(scores.ok()) << scores.status().ToString();
  EXPECT_THAT(*scores, ::testing::Each(0.0));
  // Below min_samples_to_train the model keeps predicting 0.
  ASSERT_TRUE(model->UpdateLabelled(data.features, data.throughputs, data.groups).ok());
  EXPECT_EQ(model->num_samples(), 5);
  EXPECT_THAT(*model->Predict(data.features), ::testing::Each(0.0));
  EXPECT_EQ(model->format(), "tuned-xgb-v1");
}

TEST(XgbCostModel, LearnsSyntheticRankingOnHeldOutData) {
  Synthetic train = MakeSynthetic(600, 7);
  Synthetic test = MakeSynthetic(300, 8);
  for (XgbObjective objective : {XgbObjective::kRegression, XgbObjective::kPairwiseRank}) {
    auto model = NewXgb(objective);
    ASSERT_TRUE(model->UpdateLabelled(train.features, train.throughputs, train.groups).ok());
    auto scores = model->Predict(test.features);
    ASSERT_TRUE(scores.ok()) << scores.status().ToString();
    const double rho = GroupSpearman(test, *scores);
    EXPECT_GT(rho, 0.75) << "objective " << int(objective);

    auto random = MakeRandomCostModel(3);
    auto random_scores = random->Predict(test.features);
    ASSERT_TRUE(random_scores.ok());
    EXPECT_LT(std::fabs(GroupSpearman(test, *random_scores)), 0.25);
  }
}

TEST(XgbCostModel, OnlineUpdatesImproveOverBatches) {
  Synthetic test = MakeSynthetic(300, 11);
  auto model = NewXgb();
  double first = 0;
  for (int batch = 0; batch < 8; ++batch) {
    Synthetic data = MakeSynthetic(32, 100 + uint64_t(batch));
    ASSERT_TRUE(model->UpdateLabelled(data.features, data.throughputs, data.groups).ok());
    if (batch == 0) first = GroupSpearman(test, *model->Predict(test.features));
  }
  EXPECT_EQ(model->num_samples(), 256);
  const double last = GroupSpearman(test, *model->Predict(test.features));
  EXPECT_GT(last, first);
  EXPECT_GT(last, 0.6);
}

TEST(XgbCostModel, SerializeRoundTripGivesIdenticalPredictions) {
  Synthetic train = MakeSynthetic(200, 21);
  Synthetic test = MakeSynthetic(50, 22);
  auto model = NewXgb();
  ASSERT_TRUE(model->UpdateLabelled(train.features, train.throughputs, train.groups).ok());
  auto blob = model->Serialize();
  ASSERT_TRUE(blob.ok()) << blob.status().ToString();

  auto loaded = NewXgb();
  ASSERT_TRUE(loaded->Deserialize(*blob).ok());
  EXPECT_EQ(loaded->num_samples(), 200);
  EXPECT_EQ(*loaded->Predict(test.features), *model->Predict(test.features));
  // The blob carries the training data: the loaded model keeps training like the original.
  Synthetic more = MakeSynthetic(40, 23);
  ASSERT_TRUE(model->UpdateLabelled(more.features, more.throughputs, more.groups).ok());
  ASSERT_TRUE(loaded->UpdateLabelled(more.features, more.throughputs, more.groups).ok());
  EXPECT_EQ(loaded->num_samples(), 240);
  EXPECT_EQ(*loaded->Predict(test.features), *model->Predict(test.features));
}

TEST(XgbCostModel, UntrainedModelRoundTrips) {
  auto model = NewXgb();
  auto blob = model->Serialize();
  ASSERT_TRUE(blob.ok());
  auto loaded = NewXgb();
  ASSERT_TRUE(loaded->Deserialize(*blob).ok());
  EXPECT_EQ(loaded->num_samples(), 0);
}

TEST(XgbCostModel, RejectsWrongFeatureLength) {
  auto model = NewXgb();
  std::vector<std::vector<float>> bad = {std::vector<float>(size_t(FeatureCount()), 0.f),
                                         std::vector<float>(3, 0.f)};
  auto scores = model->Predict(bad);
  ASSERT_FALSE(scores.ok());
  EXPECT_EQ(scores.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(scores.status().message(), HasSubstr("feature vector 1 has 3 values"));
  Status update = model->UpdateLabelled(bad, {1.0, 2.0}, {"a", "a"});
  EXPECT_EQ(update.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(model->num_samples(), 0);
}

TEST(XgbCostModel, RejectsMismatchedAndInvalidLabels) {
  auto model = NewXgb();
  Synthetic data = MakeSynthetic(3, 1);
  Status sizes = model->UpdateLabelled(data.features, {1.0, 2.0}, data.groups);
  EXPECT_EQ(sizes.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(sizes.message(), HasSubstr("must match"));
  Status negative = model->UpdateLabelled(data.features, {1.0, -2.0, 3.0}, data.groups);
  EXPECT_EQ(negative.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(negative.message(), HasSubstr("throughput 1"));
  Status nan = model->UpdateLabelled(data.features, {1.0, 2.0, std::nan("")}, data.groups);
  EXPECT_EQ(nan.code(), StatusCode::kInvalidArgument);
  data.features[2][5] = std::nanf("");
  Status nan_feature = model->UpdateLabelled(data.features, {1.0, 2.0, 3.0}, data.groups);
  EXPECT_EQ(nan_feature.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(nan_feature.message(), HasSubstr("not finite"));
  EXPECT_EQ(model->num_samples(), 0);
}

TEST(XgbCostModel, RejectsDamagedOrForeignBlobs) {
  auto model = NewXgb();
  Synthetic train = MakeSynthetic(40, 5);
  ASSERT_TRUE(model->UpdateLabelled(train.features, train.throughputs, train.groups).ok());
  std::string blob = *model->Serialize();

  auto target = NewXgb();
  EXPECT_EQ(target->Deserialize("not a model").code(), StatusCode::kDataLoss);
  EXPECT_EQ(target->Deserialize(blob.substr(0, blob.size() / 2)).code(), StatusCode::kDataLoss);
  EXPECT_EQ(target->Deserialize(blob + "x").code(), StatusCode::kDataLoss);

  std::string other_version = blob;
  const uint32_t version = kFeatureVersion + 1;
  std::memcpy(other_version.data() + 12, &version, sizeof(version));  // after magic + container
  Status refused = target->Deserialize(other_version);
  EXPECT_EQ(refused.code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(refused.message(), HasSubstr("feature version"));
  // A refused blob leaves the model as it was.
  EXPECT_EQ(target->num_samples(), 0);
}

TEST(XgbCostModel, RejectsBadOptions) {
  XgbOptions options;
  options.num_rounds = 0;
  EXPECT_EQ(MakeXgbCostModel(options).status().code(), StatusCode::kInvalidArgument);
  options = {};
  options.nthread = 0;
  EXPECT_EQ(MakeXgbCostModel(options).status().code(), StatusCode::kInvalidArgument);
}

TEST(Metrics, SpearmanRecallAndPeak) {
  EXPECT_DOUBLE_EQ(SpearmanCorrelation({1, 2, 3, 4}, {10, 20, 30, 40}), 1.0);
  EXPECT_DOUBLE_EQ(SpearmanCorrelation({1, 2, 3, 4}, {4, 3, 2, 1}), -1.0);
  EXPECT_DOUBLE_EQ(SpearmanCorrelation({1, 2, 3}, {5, 5, 5}), 0.0);
  // Ties take their average rank: ranks (0.5, 0.5, 2) against (0, 1, 2).
  EXPECT_NEAR(SpearmanCorrelation({1, 1, 2}, {1, 2, 3}), 0.8660254, 1e-6);
  EXPECT_DOUBLE_EQ(TopKRecall({1, 5, 3, 4}, {0, 1, 0, 1}, 2), 1.0);
  EXPECT_DOUBLE_EQ(TopKRecall({1, 5, 3, 4}, {1, 1, 0, 0}, 2), 0.5);
  EXPECT_DOUBLE_EQ(TopKPeak({1, 5, 3, 4}, {0, 0, 0, 1}, 1), 0.8);
  EXPECT_DOUBLE_EQ(TopKPeak({}, {}, 3), 0.0);
}

TEST(RandomCostModel, ScoresInUnitIntervalAndReproducible) {
  Synthetic data = MakeSynthetic(20, 1);
  auto a = MakeRandomCostModel(9);
  auto b = MakeRandomCostModel(9);
  auto sa = a->Predict(data.features);
  ASSERT_TRUE(sa.ok());
  EXPECT_EQ(*sa, *b->Predict(data.features));
  for (double s : *sa) {
    EXPECT_GE(s, 0.0);
    EXPECT_LT(s, 1.0);
  }
  ASSERT_TRUE(a->UpdateLabelled(data.features, data.throughputs, data.groups).ok());
  EXPECT_EQ(a->num_samples(), 20);
  auto blob = a->Serialize();
  ASSERT_TRUE(blob.ok());
  ASSERT_TRUE(b->Deserialize(*blob).ok());
  EXPECT_EQ(b->num_samples(), 20);
  EXPECT_EQ(b->Deserialize("x1").code(), StatusCode::kDataLoss);
  EXPECT_EQ(a->Predict({{1.f}}).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tuned::costmodel

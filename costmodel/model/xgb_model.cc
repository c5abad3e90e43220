// The XGBoost cost model. Every Update retrains from scratch on all samples (MetaSchedule's
// XGBModel does the same): labels are renormalised per workload as the best throughput grows,
// so trees fitted to old labels would be wrong.
//
// Blob format "tuned-xgb-v1" (host byte order, little-endian on every machine we build for):
//   bytes  "TUNEDXGB"                         magic
//   u32    1                                  container version
//   u32    kFeatureVersion, u32 FeatureCount()
//   u32    objective (XgbObjective)
//   u32    G; G x (u32 length, bytes)         group keys (workload keys)
//   u64    N; N x (u32 group index, f64 throughput)
//   f32    N x FeatureCount()                 features, row-major
//   u64    L; L bytes                         booster as XGBoost JSON (L = 0: untrained)

#include <xgboost/c_api.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <unordered_map>

#include "costmodel/features/features.h"
#include "costmodel/model/cost_model.h"

namespace tuned::costmodel {
namespace {

constexpr char kMagic[8] = {'T', 'U', 'N', 'E', 'D', 'X', 'G', 'B'};
constexpr uint32_t kContainerVersion = 1;

// The one place XGBoost's error channel becomes a Status.
Status XgbCheck(int rc, const char* call) {
  if (rc == 0) return Status::Ok();
  return InternalError(std::string("xgboost ") + call + ": " + XGBGetLastError());
}

struct DMatrixDeleter {
  void operator()(void* h) const { XGDMatrixFree(h); }
};
struct BoosterDeleter {
  void operator()(void* h) const { XGBoosterFree(h); }
};
using DMatrixPtr = std::unique_ptr<void, DMatrixDeleter>;
using BoosterPtr = std::unique_ptr<void, BoosterDeleter>;

StatusOr<DMatrixPtr> MakeDMatrix(const float* data, size_t rows, size_t cols) {
  DMatrixHandle handle = nullptr;
  TUNED_RETURN_IF_ERROR(XgbCheck(
      XGDMatrixCreateFromMat(data, bst_ulong(rows), bst_ulong(cols), std::nanf(""), &handle),
      "XGDMatrixCreateFromMat"));
  return DMatrixPtr(handle);
}

class Writer {
 public:
  void Bytes(const void* p, size_t n) { out_.append(static_cast<const char*>(p), n); }
  template <typename T>
  void Put(T v) {
    Bytes(&v, sizeof(T));
  }
  std::string Take() { return std::move(out_); }

 private:
  std::string out_;
};

class Reader {
 public:
  explicit Reader(const std::string& in) : in_(in) {}
  Status Bytes(void* p, size_t n) {
    if (n > in_.size() - pos_) return DataLossError("tuned-xgb-v1 blob is truncated");
    if (n == 0) return Status::Ok();  // an empty vector's data() may be null: no memcpy
    std::memcpy(p, in_.data() + pos_, n);
    pos_ += n;
    return Status::Ok();
  }
  template <typename T>
  Status Get(T* v) {
    return Bytes(v, sizeof(T));
  }
  size_t remaining() const { return in_.size() - pos_; }

 private:
  const std::string& in_;
  size_t pos_ = 0;
};

class XgbCostModel : public CostModel {
 public:
  explicit XgbCostModel(const XgbOptions& options) : options_(options) {}

  StatusOr<std::vector<double>> Predict(const std::vector<std::vector<float>>& features) override {
    TUNED_RETURN_IF_ERROR(CheckFeatureVectors(features));
    std::vector<double> scores(features.size(), 0.0);
    if (!booster_ || features.empty()) return scores;
    const size_t cols = size_t(FeatureCount());
    std::vector<float> flat;
    flat.reserve(features.size() * cols);
    for (const std::vector<float>& f : features) flat.insert(flat.end(), f.begin(), f.end());
    TUNED_ASSIGN_OR_RETURN(DMatrixPtr dmat, MakeDMatrix(flat.data(), features.size(), cols));
    bst_ulong out_len = 0;
    const float* out = nullptr;
    TUNED_RETURN_IF_ERROR(XgbCheck(XGBoosterPredict(booster_.get(), dmat.get(), /*option_mask=*/0,
                                                    /*ntree_limit=*/0, /*training=*/0, &out_len,
                                                    &out),
                                   "XGBoosterPredict"));
    if (out_len != features.size()) {
      return InternalError("xgboost returned " + std::to_string(out_len) + " predictions for " +
                           std::to_string(features.size()) + " rows");
    }
    for (size_t i = 0; i < features.size(); ++i) scores[i] = double(out[i]);
    return scores;
  }

  Status UpdateLabelled(const std::vector<std::vector<float>>& features,
                        const std::vector<double>& throughputs,
                        const std::vector<std::string>& group_keys) override {
    TUNED_RETURN_IF_ERROR(CheckUpdateArguments(features, throughputs, group_keys));
    for (size_t i = 0; i < throughputs.size(); ++i) {
      if (!std::isfinite(throughputs[i]) || throughputs[i] < 0) {
        return InvalidArgumentError("update: throughput " + std::to_string(i) + " is " +
                                    std::to_string(throughputs[i]) +
                                    ", expected a finite value >= 0");
      }
    }
    for (size_t i = 0; i < features.size(); ++i) {
      auto [it, inserted] = group_index_.try_emplace(group_keys[i], uint32_t(groups_.size()));
      if (inserted) groups_.push_back(group_keys[i]);
      features_.insert(features_.end(), features[i].begin(), features[i].end());
      throughputs_.push_back(throughputs[i]);
      sample_groups_.push_back(it->second);
    }
    DropOldest();
    return Train();
  }

  int64_t num_samples() const override { return int64_t(throughputs_.size()); }

  StatusOr<std::string> Serialize() const override {
    Writer w;
    w.Bytes(kMagic, sizeof(kMagic));
    w.Put<uint32_t>(kContainerVersion);
    w.Put<uint32_t>(kFeatureVersion);
    w.Put<uint32_t>(uint32_t(FeatureCount()));
    w.Put<uint32_t>(uint32_t(options_.objective));
    w.Put<uint32_t>(uint32_t(groups_.size()));
    for (const std::string& g : groups_) {
      w.Put<uint32_t>(uint32_t(g.size()));
      w.Bytes(g.data(), g.size());
    }
    w.Put<uint64_t>(uint64_t(throughputs_.size()));
    for (size_t i = 0; i < throughputs_.size(); ++i) {
      w.Put<uint32_t>(sample_groups_[i]);
      w.Put<double>(throughputs_[i]);
    }
    w.Bytes(features_.data(), features_.size() * sizeof(float));
    if (!booster_) {
      w.Put<uint64_t>(0);
      return w.Take();
    }
    bst_ulong len = 0;
    const char* data = nullptr;
    TUNED_RETURN_IF_ERROR(XgbCheck(
        XGBoosterSaveModelToBuffer(booster_.get(), R"({"format": "json"})", &len, &data),
        "XGBoosterSaveModelToBuffer"));
    w.Put<uint64_t>(uint64_t(len));
    w.Bytes(data, size_t(len));
    return w.Take();
  }

  Status Deserialize(const std::string& blob) override {
    Reader r(blob);
    char magic[sizeof(kMagic)];
    TUNED_RETURN_IF_ERROR(r.Bytes(magic, sizeof(magic)));
    if (std::memcmp(magic, kMagic, sizeof(kMagic)) != 0) {
      return DataLossError("blob is not a tuned-xgb-v1 cost model (bad magic)");
    }
    uint32_t container = 0, feature_version = 0, feature_count = 0, objective = 0, num_groups = 0;
    TUNED_RETURN_IF_ERROR(r.Get(&container));
    if (container != kContainerVersion) {
      return FailedPreconditionError("cost model blob has container version " +
                                     std::to_string(container) + ", this build reads " +
                                     std::to_string(kContainerVersion));
    }
    TUNED_RETURN_IF_ERROR(r.Get(&feature_version));
    TUNED_RETURN_IF_ERROR(r.Get(&feature_count));
    if (feature_version != kFeatureVersion || feature_count != uint32_t(FeatureCount())) {
      return FailedPreconditionError(
          "cost model was trained on feature version " + std::to_string(feature_version) + " (" +
          std::to_string(feature_count) + " features), this build extracts version " +
          std::to_string(kFeatureVersion) + " (" + std::to_string(FeatureCount()) + ")");
    }
    TUNED_RETURN_IF_ERROR(r.Get(&objective));
    if (objective > uint32_t(XgbObjective::kPairwiseRank)) {
      return DataLossError("cost model blob has unknown objective " + std::to_string(objective));
    }
    TUNED_RETURN_IF_ERROR(r.Get(&num_groups));
    std::vector<std::string> groups;
    for (uint32_t g = 0; g < num_groups; ++g) {
      uint32_t len = 0;
      TUNED_RETURN_IF_ERROR(r.Get(&len));
      if (len > r.remaining()) return DataLossError("tuned-xgb-v1 blob is truncated");
      std::string key(len, '\0');
      TUNED_RETURN_IF_ERROR(r.Bytes(key.data(), len));
      groups.push_back(std::move(key));
    }
    uint64_t n = 0;
    TUNED_RETURN_IF_ERROR(r.Get(&n));
    // Each sample needs at least its 12-byte header and its features.
    if (n > r.remaining() / (12 + sizeof(float) * feature_count)) {
      return DataLossError("tuned-xgb-v1 blob is truncated");
    }
    std::vector<uint32_t> sample_groups(n);
    std::vector<double> throughputs(n);
    for (uint64_t i = 0; i < n; ++i) {
      TUNED_RETURN_IF_ERROR(r.Get(&sample_groups[i]));
      TUNED_RETURN_IF_ERROR(r.Get(&throughputs[i]));
      if (sample_groups[i] >= num_groups) {
        return DataLossError("tuned-xgb-v1 blob: sample " + std::to_string(i) +
                             " names a missing group");
      }
    }
    std::vector<float> features(n * feature_count);
    TUNED_RETURN_IF_ERROR(r.Bytes(features.data(), features.size() * sizeof(float)));
    uint64_t booster_len = 0;
    TUNED_RETURN_IF_ERROR(r.Get(&booster_len));
    if (booster_len != r.remaining()) {
      return DataLossError("tuned-xgb-v1 blob: booster is " + std::to_string(r.remaining()) +
                           " bytes, header says " + std::to_string(booster_len));
    }
    BoosterPtr booster;
    if (booster_len > 0) {
      std::string json(booster_len, '\0');
      TUNED_RETURN_IF_ERROR(r.Bytes(json.data(), json.size()));
      TUNED_ASSIGN_OR_RETURN(booster, NewBooster(nullptr, 0));
      TUNED_RETURN_IF_ERROR(XgbCheck(
          XGBoosterLoadModelFromBuffer(booster.get(), json.data(), bst_ulong(json.size())),
          "XGBoosterLoadModelFromBuffer"));
      TUNED_RETURN_IF_ERROR(SetThreadParams(booster.get()));
    }
    // Everything parsed: commit.
    options_.objective = XgbObjective(objective);
    groups_ = std::move(groups);
    group_index_.clear();
    for (size_t g = 0; g < groups_.size(); ++g) group_index_[groups_[g]] = uint32_t(g);
    sample_groups_ = std::move(sample_groups);
    throughputs_ = std::move(throughputs);
    features_ = std::move(features);
    booster_ = std::move(booster);
    return Status::Ok();
  }

  std::string format() const override { return "tuned-xgb-v1"; }

 private:
  static StatusOr<BoosterPtr> NewBooster(const DMatrixHandle* cache, bst_ulong n) {
    BoosterHandle handle = nullptr;
    TUNED_RETURN_IF_ERROR(XgbCheck(XGBoosterCreate(cache, n, &handle), "XGBoosterCreate"));
    return BoosterPtr(handle);
  }

  Status SetParam(BoosterHandle booster, const char* name, const std::string& value) const {
    return XgbCheck(XGBoosterSetParam(booster, name, value.c_str()), "XGBoosterSetParam");
  }

  Status SetThreadParams(BoosterHandle booster) const {
    TUNED_RETURN_IF_ERROR(SetParam(booster, "nthread", std::to_string(options_.nthread)));
    return SetParam(booster, "verbosity", "0");
  }

  void DropOldest() {
    const size_t n = throughputs_.size();
    if (int64_t(n) <= options_.max_samples) return;
    const size_t drop = n - size_t(options_.max_samples);
    const size_t cols = size_t(FeatureCount());
    throughputs_.erase(throughputs_.begin(), throughputs_.begin() + ptrdiff_t(drop));
    sample_groups_.erase(sample_groups_.begin(), sample_groups_.begin() + ptrdiff_t(drop));
    features_.erase(features_.begin(), features_.begin() + ptrdiff_t(drop * cols));
  }

  // Throughput / best throughput of the sample's workload.
  std::vector<float> NormalisedLabels() const {
    std::vector<double> best(groups_.size(), 0.0);
    for (size_t i = 0; i < throughputs_.size(); ++i) {
      best[sample_groups_[i]] = std::max(best[sample_groups_[i]], throughputs_[i]);
    }
    std::vector<float> labels(throughputs_.size());
    for (size_t i = 0; i < labels.size(); ++i) {
      const double b = best[sample_groups_[i]];
      labels[i] = b > 0 ? float(throughputs_[i] / b) : 0.f;
    }
    return labels;
  }

  Status Train() {
    const size_t n = throughputs_.size();
    if (int64_t(n) < options_.min_samples_to_train) return Status::Ok();
    std::vector<float> labels = NormalisedLabels();
    if (std::all_of(labels.begin(), labels.end(), [&](float y) { return y == labels.front(); })) {
      return Status::Ok();  // Nothing to rank yet.
    }
    const size_t cols = size_t(FeatureCount());
    DMatrixPtr dmat;
    if (options_.objective == XgbObjective::kPairwiseRank) {
      // Ranking needs each query group's rows contiguous.
      std::vector<size_t> order(n);
      std::iota(order.begin(), order.end(), size_t(0));
      std::stable_sort(order.begin(), order.end(),
                       [&](size_t a, size_t b) { return sample_groups_[a] < sample_groups_[b]; });
      std::vector<float> rows(n * cols), sorted_labels(n);
      std::vector<unsigned> sizes;
      for (size_t i = 0; i < n; ++i) {
        std::memcpy(&rows[i * cols], &features_[order[i] * cols], cols * sizeof(float));
        sorted_labels[i] = labels[order[i]];
        if (i == 0 || sample_groups_[order[i]] != sample_groups_[order[i - 1]]) sizes.push_back(0);
        ++sizes.back();
      }
      TUNED_ASSIGN_OR_RETURN(dmat, MakeDMatrix(rows.data(), n, cols));
      TUNED_RETURN_IF_ERROR(XgbCheck(
          XGDMatrixSetFloatInfo(dmat.get(), "label", sorted_labels.data(), bst_ulong(n)),
          "XGDMatrixSetFloatInfo(label)"));
      TUNED_RETURN_IF_ERROR(XgbCheck(
          XGDMatrixSetUIntInfo(dmat.get(), "group", sizes.data(), bst_ulong(sizes.size())),
          "XGDMatrixSetUIntInfo(group)"));
    } else {
      TUNED_ASSIGN_OR_RETURN(dmat, MakeDMatrix(features_.data(), n, cols));
      TUNED_RETURN_IF_ERROR(
          XgbCheck(XGDMatrixSetFloatInfo(dmat.get(), "label", labels.data(), bst_ulong(n)),
                   "XGDMatrixSetFloatInfo(label)"));
    }
    DMatrixHandle cache[] = {dmat.get()};
    TUNED_ASSIGN_OR_RETURN(BoosterPtr booster, NewBooster(cache, 1));
    BoosterHandle b = booster.get();
    TUNED_RETURN_IF_ERROR(SetThreadParams(b));
    TUNED_RETURN_IF_ERROR(SetParam(b, "objective",
                                   options_.objective == XgbObjective::kPairwiseRank
                                       ? "rank:pairwise"
                                       : "reg:squarederror"));
    TUNED_RETURN_IF_ERROR(SetParam(b, "tree_method", "hist"));
    TUNED_RETURN_IF_ERROR(SetParam(b, "max_bin", std::to_string(options_.max_bin)));
    TUNED_RETURN_IF_ERROR(SetParam(b, "max_depth", std::to_string(options_.max_depth)));
    TUNED_RETURN_IF_ERROR(SetParam(b, "eta", std::to_string(options_.eta)));
    TUNED_RETURN_IF_ERROR(SetParam(b, "gamma", std::to_string(options_.gamma)));
    TUNED_RETURN_IF_ERROR(
        SetParam(b, "min_child_weight", std::to_string(options_.min_child_weight)));
    TUNED_RETURN_IF_ERROR(SetParam(b, "seed", std::to_string(options_.seed)));
    for (int round = 0; round < options_.num_rounds; ++round) {
      TUNED_RETURN_IF_ERROR(
          XgbCheck(XGBoosterUpdateOneIter(b, round, dmat.get()), "XGBoosterUpdateOneIter"));
    }
    booster_ = std::move(booster);
    return Status::Ok();
  }

  XgbOptions options_;
  std::vector<std::string> groups_;
  std::unordered_map<std::string, uint32_t> group_index_;
  std::vector<float> features_;  // row-major, FeatureCount() per sample
  std::vector<double> throughputs_;
  std::vector<uint32_t> sample_groups_;
  BoosterPtr booster_;
};

}  // namespace

StatusOr<std::unique_ptr<CostModel>> MakeXgbCostModel(const XgbOptions& options) {
  if (options.num_rounds < 1) return InvalidArgumentError("xgb options: num_rounds must be >= 1");
  if (options.max_depth < 1) return InvalidArgumentError("xgb options: max_depth must be >= 1");
  if (!(options.eta > 0)) return InvalidArgumentError("xgb options: eta must be > 0");
  if (options.max_bin < 2) return InvalidArgumentError("xgb options: max_bin must be >= 2");
  if (options.nthread < 1) return InvalidArgumentError("xgb options: nthread must be >= 1");
  if (options.max_samples < 1) return InvalidArgumentError("xgb options: max_samples must be >= 1");
  if (options.min_samples_to_train < 2) {
    return InvalidArgumentError("xgb options: min_samples_to_train must be >= 2");
  }
  return std::unique_ptr<CostModel>(std::make_unique<XgbCostModel>(options));
}

}  // namespace tuned::costmodel

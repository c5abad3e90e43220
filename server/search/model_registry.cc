#include "server/search/model_registry.h"

#include "common/logging.h"
#include "costmodel/model/cost_model.h"
#include "costmodel/model/pretrain.h"
#include "costmodel/model/snapshot.h"
#include "server/search/candidate_features.h"
#include "server/search/default_schedule_first.h"
#include "server/search/evolutionary_search.h"
#include "server/search/random_search.h"
#include "tuning_db/database.h"

namespace tuned::search {
namespace {

// Serializes every call into a model shared by concurrently running tasks.
class LockedModel : public costmodel::CostModel {
 public:
  explicit LockedModel(std::unique_ptr<costmodel::CostModel> model) : model_(std::move(model)) {}
  StatusOr<std::vector<double>> Predict(const std::vector<std::vector<float>>& features) override {
    std::lock_guard<std::mutex> lock(mutex_);
    return model_->Predict(features);
  }
  Status UpdateLabelled(const std::vector<std::vector<float>>& features, const std::vector<double>& throughputs,
                        const std::vector<std::string>& group_keys) override {
    std::lock_guard<std::mutex> lock(mutex_);
    return model_->UpdateLabelled(features, throughputs, group_keys);
  }
  int64_t num_samples() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    return model_->num_samples();
  }
  StatusOr<std::string> Serialize() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    return model_->Serialize();
  }
  Status Deserialize(const std::string& blob) override {
    std::lock_guard<std::mutex> lock(mutex_);
    return model_->Deserialize(blob);
  }
  std::string format() const override { return model_->format(); }

 private:
  mutable std::mutex mutex_;
  std::unique_ptr<costmodel::CostModel> model_;
};

// Saves the shared model after every batch the wrapped search learns from.
class SnapshottingSearch : public SearchStrategy {
 public:
  SnapshottingSearch(std::unique_ptr<SearchStrategy> inner, ModelRegistry& models, std::string target)
      : inner_(std::move(inner)), models_(models), target_(std::move(target)) {}
  StatusOr<std::vector<Candidate>> NextBatch(int n) override { return inner_->NextBatch(n); }
  Status Update(const std::vector<MeasuredCandidate>& results) override {
    TUNED_RETURN_IF_ERROR(inner_->Update(results));
    return models_.Save(target_);
  }

 private:
  std::unique_ptr<SearchStrategy> inner_;
  ModelRegistry& models_;
  std::string target_;
};

}  // namespace

struct ModelRegistry::Entry {
  std::unique_ptr<LockedModel> model;
};

ModelRegistry::ModelRegistry(ModelStores stores, ModelFactory make_model)
    : stores_(stores), make_model_(std::move(make_model)) {}
ModelRegistry::~ModelRegistry() = default;

StatusOr<costmodel::CostModel*> ModelRegistry::ForTarget(const SearchContext& context) {
  const std::string& target = context.target;
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = models_.find(target);
  if (it != models_.end()) return it->second->model.get();
  TUNED_ASSIGN_OR_RETURN(std::unique_ptr<costmodel::CostModel> fresh,
                         make_model_ ? make_model_() : costmodel::MakeXgbCostModel());
  auto entry = std::make_unique<Entry>();
  entry->model = std::make_unique<LockedModel>(std::move(fresh));
  Status loaded = stores_.snapshots != nullptr
                      ? costmodel::LoadLatestSnapshot(*stores_.snapshots, target, *entry->model)
                      : NotFoundError("no snapshot store");
  if (loaded.ok()) {
    Logger("search")->info("cost model target='{}' loaded from snapshot, samples={}", target,
                           entry->model->num_samples());
  } else if (loaded.code() != StatusCode::kNotFound &&
             loaded.code() != StatusCode::kFailedPrecondition) {
    return loaded;
  } else if (stores_.records != nullptr) {
    auto stats = costmodel::PretrainFromDatabase(*stores_.records, target, *entry->model,
                                                 ModelPretrainOptions(context));
    if (stats.ok()) {
      Logger("search")->info("cost model target='{}' pre-trained from records, samples={}",
                             target, entry->model->num_samples());
    } else {
      Logger("search")->warn("cost model target='{}' starts untrained: {}", target,
                             stats.status().message());
    }
  }
  costmodel::CostModel* model = entry->model.get();
  models_[target] = std::move(entry);
  return model;
}

Status ModelRegistry::Save(const std::string& target) {
  if (stores_.snapshots == nullptr) return Status::Ok();
  costmodel::CostModel* model;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = models_.find(target);
    if (it == models_.end()) return NotFoundError("no cost model for target '" + target + "'");
    model = it->second->model.get();
  }
  if (model->num_samples() == 0) return Status::Ok();
  return costmodel::SaveSnapshot(*stores_.snapshots, target, *model).status();
}

StatusOr<std::unique_ptr<SearchStrategy>> MakeTaskSearch(const SearchContext& context,
                                                         const v1::SearchOptions& options,
                                                         ModelRegistry& models) {
  if (options.strategy() == "random") {
    TUNED_ASSIGN_OR_RETURN(auto random, MakeRandomSearch(context));
    return MakeDefaultScheduleFirst(std::move(random), context);
  }
  if (!options.strategy().empty() && options.strategy() != "evolutionary") {
    return InvalidArgumentError("unknown search strategy '" + options.strategy() +
                                "' (expected evolutionary or random)");
  }
  EvolutionaryOptions evolutionary;
  if (options.population() > 0) evolutionary.population = int(options.population());
  if (options.epsilon() > 0) evolutionary.epsilon = options.epsilon();
  TUNED_ASSIGN_OR_RETURN(costmodel::CostModel * model, models.ForTarget(context));
  TUNED_ASSIGN_OR_RETURN(auto search, MakeEvolutionarySearch(context, model, evolutionary));
  std::unique_ptr<SearchStrategy> saving(new SnapshottingSearch(std::move(search), models, context.target));
  return MakeDefaultScheduleFirst(std::move(saving), context);
}

}  // namespace tuned::search

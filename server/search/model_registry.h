#ifndef TUNED_SERVER_SEARCH_MODEL_REGISTRY_H_
#define TUNED_SERVER_SEARCH_MODEL_REGISTRY_H_

/// \file
/// One cost model per target, shared by every task on that target, kept in the database:
/// a target's model starts from its latest snapshot (transfer across tasks and server restarts)
/// or, without one, is pre-trained from the target's measured records; after each batch the
/// search saves it back.

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "common/status.h"
#include "server/search/search_strategy.h"
#include "tuning_db/record_store.h"
#include "tuning_db/snapshot_store.h"
#include "tuned/v1/task.pb.h"

namespace tuned::costmodel {
class CostModel;
}

namespace tuned::search {

/// Where models persist: their snapshots, and the records a new model is pre-trained from.
/// Both null: models live only in memory.
struct ModelStores {
  db::SnapshotStore* snapshots = nullptr;
  db::RecordStore* records = nullptr;
};

class ModelRegistry {
 public:
  /// Makes the empty model of a target seen for the first time.
  using ModelFactory = std::function<StatusOr<std::unique_ptr<costmodel::CostModel>>()>;

  /// The stores must outlive the registry. Models are XGBoost models unless `make_model` is
  /// given (a test that watches the model).
  explicit ModelRegistry(ModelStores stores, ModelFactory make_model = {});
  ~ModelRegistry();

  /// The model of `context.target` (thread-safe; calls on it are serialized). A new model is
  /// pre-trained with ModelPretrainOptions(context) (candidate_features.h).
  StatusOr<costmodel::CostModel*> ForTarget(const SearchContext& context);
  /// Writes `target`'s model to the database as its newest snapshot.
  Status Save(const std::string& target);

 private:
  struct Entry;
  ModelStores stores_;
  ModelFactory make_model_;
  std::mutex mutex_;
  std::map<std::string, std::unique_ptr<Entry>> models_;
};

/// The search a task runs: `options.strategy` "random" samples the design space; anything else
/// (the default) is the evolutionary search with the target's shared model, saved after every
/// batch.
StatusOr<std::unique_ptr<SearchStrategy>> MakeTaskSearch(const SearchContext& context,
                                                         const v1::SearchOptions& options,
                                                         ModelRegistry& models);

}  // namespace tuned::search

#endif  // TUNED_SERVER_SEARCH_MODEL_REGISTRY_H_

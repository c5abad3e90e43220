#ifndef TUNED_SERVER_SEARCH_MODEL_REGISTRY_H_
#define TUNED_SERVER_SEARCH_MODEL_REGISTRY_H_

/// \file
/// One cost model per target, shared by every task on that target, kept in the database:
/// a target's model starts from its latest snapshot (transfer across tasks and server restarts)
/// or, without one, is pre-trained from the target's measured records; after each batch the
/// search saves it back.

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "common/status.h"
#include "server/search/search_strategy.h"
#include "tuned/v1/task.pb.h"

namespace tuned::costmodel {
class CostModel;
}

namespace tuned::search {

class ModelRegistry {
 public:
  /// `database` may be null (models then live only in memory); it must outlive the registry.
  explicit ModelRegistry(db::Database* database);
  ~ModelRegistry();

  /// The model of `target` (thread-safe; calls on it are serialized).
  StatusOr<costmodel::CostModel*> ForTarget(const std::string& target);
  /// Writes `target`'s model to the database as its newest snapshot.
  Status Save(const std::string& target);

 private:
  struct Entry;
  db::Database* database_;
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

#ifndef TUNED_SERVER_SEARCH_MEASURED_FILTER_H_
#define TUNED_SERVER_SEARCH_MEASURED_FILTER_H_

/// \file
/// "Was this trace measured already?" — decided here and nowhere else. Every strategy keeps one
/// filter and proposes only what it calls fresh, so the task that runs a strategy trusts its
/// candidates (search_strategy.h). A trace is taken when this run proposed it or was told its
/// result; otherwise the context's database (if any) is asked, one read per batch of hashes.

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "common/status.h"
#include "server/search/search_strategy.h"
#include "tuning_db/record_store.h"

namespace tuned::search {

class MeasuredFilter {
 public:
  /// Reads `context.database` (may be null), which must outlive the filter.
  explicit MeasuredFilter(const SearchContext& context);

  /// Marks `hash` as taken: proposed, or its result is known.
  void Take(const std::string& hash) { taken_.insert(hash); }
  /// Whether this run took `hash` (no database read).
  bool Taken(const std::string& hash) const { return taken_.contains(hash); }

  /// For each of `hashes`, whether it is fresh: not taken, not in the database, and not listed
  /// earlier in `hashes`. The hashes not taken go to the database in one read; those it holds
  /// are remembered as taken. Fresh hashes are not taken: the caller takes what it proposes.
  StatusOr<std::vector<bool>> Fresh(const std::vector<std::string>& hashes);

  /// Database reads made so far (each covers a whole call of Fresh).
  int64_t database_reads() const { return database_reads_; }

 private:
  std::string workload_key_;
  std::string target_;
  db::RecordStore* database_;
  db::MeasurementKey key_;
  std::set<std::string> taken_;
  int64_t database_reads_ = 0;
};

}  // namespace tuned::search

#endif  // TUNED_SERVER_SEARCH_MEASURED_FILTER_H_

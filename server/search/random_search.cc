// The baseline search: uniform samples of the design space, deduplicated.

#include <random>
#include <unordered_set>

#include "compiler/lower/lower.h"
#include "server/search/design_space.h"
#include "server/search/search_strategy.h"
#include "tuning_db/database.h"
#include "tuning_db/trace_hash.h"

namespace tuned::search {
namespace {

class RandomSearch : public SearchStrategy {
 public:
  RandomSearch(SearchContext context, std::vector<Sketch> sketches)
      : context_(std::move(context)), sketches_(std::move(sketches)), rng_(context_.seed) {}

  StatusOr<std::vector<Candidate>> NextBatch(int n) override {
    std::vector<Candidate> batch;
    // Small design spaces run out: stop after many consecutive duplicates.
    for (int misses = 0; int(batch.size()) < n && misses < 200 + 20 * n;) {
      const Sketch& sketch = sketches_[rng_() % sketches_.size()];
      StatusOr<schedule::Schedule> sch = SampleSketch(context_, sketch, rng_());
      if (!sch.ok() || !lower::Lower(*sch).ok()) {
        ++misses;
        continue;
      }
      Candidate candidate;
      schedule::TraceToProto(sch->trace(), &candidate.trace);
      candidate.trace_hash = db::TraceHash(candidate.trace);
      TUNED_ASSIGN_OR_RETURN(bool fresh, IsFresh(candidate.trace_hash));
      if (!fresh) {
        ++misses;
        continue;
      }
      seen_.insert(candidate.trace_hash);
      batch.push_back(std::move(candidate));
    }
    return batch;
  }

  Status Update(const std::vector<MeasuredCandidate>& results) override {
    for (const MeasuredCandidate& m : results) seen_.insert(db::TraceHash(m.trace));
    return Status::Ok();
  }

 private:
  StatusOr<bool> IsFresh(const std::string& hash) {
    if (seen_.count(hash)) return false;
    if (context_.database == nullptr) return true;
    TUNED_ASSIGN_OR_RETURN(bool measured,
                           context_.database->HasMeasured(context_.workload->key(), context_.target, hash));
    return !measured;
  }

  SearchContext context_;
  std::vector<Sketch> sketches_;
  std::mt19937_64 rng_;
  std::unordered_set<std::string> seen_;
};

}  // namespace

StatusOr<std::unique_ptr<SearchStrategy>> MakeRandomSearch(const SearchContext& context) {
  if (!context.workload) return InvalidArgumentError("search: no workload");
  std::vector<Sketch> sketches = GenerateSketches(context);
  return std::unique_ptr<SearchStrategy>(new RandomSearch(context, std::move(sketches)));
}

}  // namespace tuned::search

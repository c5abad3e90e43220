// The baseline search: uniform samples of the design space, never one measured before.

#include <optional>
#include <random>

#include "server/search/candidate_check.h"
#include "server/search/design_space.h"
#include "server/search/measured_filter.h"
#include "server/search/search_strategy.h"
#include "server/search/random_search.h"
#include "tuning_db/trace_hash.h"

namespace tuned::search {
namespace {

class RandomSearch : public SearchStrategy {
 public:
  RandomSearch(SearchContext context, std::vector<Sketch> sketches)
      : context_(std::move(context)),
        sketches_(std::move(sketches)),
        rng_(context_.seed),
        filter_(context_),
        check_(context_) {}

  StatusOr<std::vector<Candidate>> NextBatch(int n) override {
    std::vector<Candidate> batch;
    // Small design spaces run out: stop after many consecutive duplicates.
    for (int misses = 0; int(batch.size()) < n && misses < 200 + 20 * n;) {
      // Sample what is still missing, then ask about all of it at once.
      std::vector<Candidate> sampled;
      std::vector<std::string> hashes;
      while (int(batch.size() + sampled.size()) < n && misses < 200 + 20 * n) {
        std::optional<Candidate> candidate = Sample();
        if (!candidate || filter_.Taken(candidate->trace_hash)) {
          ++misses;
          continue;
        }
        hashes.push_back(candidate->trace_hash);
        sampled.push_back(std::move(*candidate));
      }
      TUNED_ASSIGN_OR_RETURN(std::vector<bool> fresh, filter_.Fresh(hashes));
      for (size_t i = 0; i < sampled.size(); ++i) {
        if (!fresh[i]) {
          ++misses;
          continue;
        }
        filter_.Take(sampled[i].trace_hash);
        batch.push_back(std::move(sampled[i]));
      }
    }
    return batch;
  }

  Status Update(const std::vector<MeasuredCandidate>& results) override {
    for (const MeasuredCandidate& m : results) filter_.Take(db::TraceHash(m.trace));
    return Status::Ok();
  }

 private:
  // One sample of a random sketch that runs on the target, or nothing.
  std::optional<Candidate> Sample() {
    const Sketch& sketch = sketches_[rng_() % sketches_.size()];
    StatusOr<schedule::Schedule> sch = SampleSketch(context_, sketch, rng_());
    if (!sch.ok() || !check_.Check(*sch).ok()) return std::nullopt;
    Candidate candidate;
    schedule::TraceToProto(sch->trace(), &candidate.trace);
    candidate.trace_hash = db::TraceHash(candidate.trace);
    return candidate;
  }

  SearchContext context_;
  std::vector<Sketch> sketches_;
  std::mt19937_64 rng_;
  MeasuredFilter filter_;
  CandidateCheck check_;
};

}  // namespace

StatusOr<std::unique_ptr<SearchStrategy>> MakeRandomSearch(const SearchContext& context) {
  if (!context.workload) return InvalidArgumentError("search: no workload");
  std::vector<Sketch> sketches = GenerateSketches(context);
  return std::unique_ptr<SearchStrategy>(new RandomSearch(context, std::move(sketches)));
}

}  // namespace tuned::search

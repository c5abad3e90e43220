#include "server/search/default_schedule_first.h"

#include "compiler/lower/pipeline.h"
#include "server/search/design_space.h"
#include "server/search/measured_filter.h"
#include "tuning_db/trace_hash.h"

namespace tuned::search {
namespace {

class DefaultScheduleFirst : public SearchStrategy {
 public:
  DefaultScheduleFirst(std::unique_ptr<SearchStrategy> inner, const SearchContext& context,
                       Candidate default_schedule)
      : inner_(std::move(inner)), filter_(context), default_(std::move(default_schedule)) {}

  StatusOr<std::vector<Candidate>> NextBatch(int n) override {
    std::vector<Candidate> batch;
    if (!proposed_default_ && n > 0) {
      proposed_default_ = true;
      TUNED_ASSIGN_OR_RETURN(std::vector<bool> fresh, filter_.Fresh({default_.trace_hash}));
      if (fresh[0]) {
        batch.push_back(default_);
        --n;
      }
    }
    if (n == 0) return batch;
    TUNED_ASSIGN_OR_RETURN(std::vector<Candidate> rest, inner_->NextBatch(n));
    for (Candidate& c : rest) batch.push_back(std::move(c));
    return batch;
  }

  Status Update(const std::vector<MeasuredCandidate>& results) override {
    for (const MeasuredCandidate& m : results) filter_.Take(db::TraceHash(m.trace));
    return inner_->Update(results);
  }

 private:
  std::unique_ptr<SearchStrategy> inner_;
  MeasuredFilter filter_;  // only ever asked about the default schedule
  Candidate default_;
  bool proposed_default_ = false;
};

}  // namespace

StatusOr<Candidate> DefaultScheduleCandidate(const std::shared_ptr<const ir::Workload>& workload) {
  TUNED_ASSIGN_OR_RETURN(schedule::Trace trace, lower::DefaultScheduleTrace(workload));
  Candidate candidate;
  schedule::TraceToProto(trace, &candidate.trace);
  candidate.trace_hash = db::TraceHash(candidate.trace);
  return candidate;
}

StatusOr<std::unique_ptr<SearchStrategy>> MakeDefaultScheduleFirst(std::unique_ptr<SearchStrategy> inner,
                                                                   const SearchContext& context) {
  if (!context.workload) return InvalidArgumentError("search: no workload");
  if (IsGpuContext(context)) return inner;  // the default schedule is a CPU program
  TUNED_ASSIGN_OR_RETURN(Candidate candidate, DefaultScheduleCandidate(context.workload));
  return std::unique_ptr<SearchStrategy>(new DefaultScheduleFirst(std::move(inner), context, std::move(candidate)));
}

}  // namespace tuned::search

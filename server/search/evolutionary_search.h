#ifndef TUNED_SERVER_SEARCH_EVOLUTIONARY_SEARCH_H_
#define TUNED_SERVER_SEARCH_EVOLUTIONARY_SEARCH_H_

/// \file
/// Evolutionary search guided by a learned cost model (MetaSchedule's loop, our defaults).
///
/// Each NextBatch(n):
///   1. population: the best measured traces of this workload and target (own results and the
///      database's), filled up with fresh samples of the sketches;
///   2. `rounds` generations: every individual yields a mutated child (a decision changed and
///      the trace replayed; invalid children are retried, then dropped); parents and children
///      are scored by the cost model and the best `population` survive;
///   3. the batch: the best-scored individuals never measured nor already proposed, with a
///      share `epsilon` replaced by fresh random samples (exploration, and the guard against a
///      model that is confidently wrong).
/// In steps 2 and 3 every sketch is sure of a share: the best-scored few of each sketch come
/// first (a quarter of the places shared out, at least one each in a batch). Early on the
/// model has seen few candidates of a sketch and ranks them low. Without the share, a
/// convolution's other-vector-axis sketch got 8 of 64 trials while it held the best kernel.
/// Update(results) hands the measured results with their features to CostModel::Update, which
/// labels them by the model's one rule (cost_model.h) and retrains. "Never measured" is the
/// MeasuredFilter's answer (measured_filter.h): one database read per batch of candidates.

#include <memory>

#include "server/search/search_strategy.h"

namespace tuned::costmodel {
class CostModel;
}

namespace tuned::search {

struct EvolutionaryOptions {
  int population = 128;      // individuals kept per generation
  int rounds = 3;            // generations per batch
  double epsilon = 0.1;      // share of each batch picked at random
  int seeds_from_measured = 16;  // best measured traces that start the population
  int mutation_retries = 4;  // tries before an invalid child is dropped
};

/// The model is shared (e.g. across the tasks of one target) and must outlive the strategy.
StatusOr<std::unique_ptr<SearchStrategy>> MakeEvolutionarySearch(const SearchContext& context,
                                                                 costmodel::CostModel* model,
                                                                 const EvolutionaryOptions& options = {});

}  // namespace tuned::search

#endif  // TUNED_SERVER_SEARCH_EVOLUTIONARY_SEARCH_H_

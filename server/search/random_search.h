#ifndef TUNED_SERVER_SEARCH_RANDOM_SEARCH_H_
#define TUNED_SERVER_SEARCH_RANDOM_SEARCH_H_

/// \file
/// The random search: samples the design space uniformly (the baseline the evolutionary search
/// must beat, and `tuned tune --search random`).

#include <memory>

#include "common/status.h"
#include "server/search/search_strategy.h"

namespace tuned::search {

StatusOr<std::unique_ptr<SearchStrategy>> MakeRandomSearch(const SearchContext& context);

}  // namespace tuned::search

#endif  // TUNED_SERVER_SEARCH_RANDOM_SEARCH_H_

#ifndef TUNED_SERVER_SEARCH_CANDIDATE_FEATURES_H_
#define TUNED_SERVER_SEARCH_CANDIDATE_FEATURES_H_

/// \file
/// How candidates on a target are featurized. The live search scores candidates with these
/// options and the target's shared model is pre-trained from stored records with the same
/// ones, so the model is queried on the feature distribution it was trained on (cores from the
/// target, not a default).

#include "costmodel/features/features.h"
#include "costmodel/model/pretrain.h"
#include "server/search/search_strategy.h"

namespace tuned::search {

/// The options every candidate of a search on `context` is featurized with.
costmodel::FeatureOptions CandidateFeatureOptions(const SearchContext& context);

/// The options the model of `context`'s target is pre-trained with from its stored records.
costmodel::PretrainOptions ModelPretrainOptions(const SearchContext& context);

}  // namespace tuned::search

#endif  // TUNED_SERVER_SEARCH_CANDIDATE_FEATURES_H_

#include "server/search/candidate_features.h"

namespace tuned::search {

costmodel::FeatureOptions CandidateFeatureOptions(const SearchContext& context) {
  costmodel::FeatureOptions options;
  options.num_cores = context.num_cores;
  return options;
}

costmodel::PretrainOptions ModelPretrainOptions(const SearchContext& context) {
  costmodel::PretrainOptions options;
  options.features = CandidateFeatureOptions(context);
  return options;
}

}  // namespace tuned::search

#include "server/search/candidate_features.h"

#include <algorithm>

#include "compiler/codegen/gpu/gpu_source.h"
#include "target/target.h"

namespace tuned::search {
namespace {

// What the GPU block assumes of a GPU target's SM: the defaults, with what the target states.
costmodel::GpuFeatureOptions GpuOptionsOf(const target::Target& target) {
  costmodel::GpuFeatureOptions options;
  const int warp = target.kind == target::TargetKind::kCuda ? target.cuda.warp_size : target.opencl.sub_group_size;
  if (warp > 0) options.warp_size = warp;
  // An SM holds at least what one block may use.
  const lower::gpu::GpuLimits limits = codegen::gpu::LimitsOf(target);
  options.shared_bytes_per_sm = std::max(options.shared_bytes_per_sm, limits.max_shared_bytes);
  options.max_threads_per_sm = std::max(options.max_threads_per_sm, limits.max_threads_per_block);
  return options;
}

}  // namespace

costmodel::FeatureOptions CandidateFeatureOptions(const SearchContext& context) {
  costmodel::FeatureOptions options;
  options.num_cores = context.num_cores;
  StatusOr<target::Target> target = target::ParseTarget(context.target);
  if (target.ok() && target->kind != target::TargetKind::kLlvmCpu) options.gpu = GpuOptionsOf(*target);
  return options;
}

costmodel::PretrainOptions ModelPretrainOptions(const SearchContext& context) {
  costmodel::PretrainOptions options;
  options.features = CandidateFeatureOptions(context);
  return options;
}

}  // namespace tuned::search

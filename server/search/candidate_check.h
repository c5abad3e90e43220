#ifndef TUNED_SERVER_SEARCH_CANDIDATE_CHECK_H_
#define TUNED_SERVER_SEARCH_CANDIDATE_CHECK_H_

/// \file
/// Whether a sampled or mutated candidate can run on the search's target, decided before it is
/// proposed, so that an invalid candidate never occupies a worker. Every candidate must lower
/// (its loop program is what the cost model describes); on a GPU target it must also lower to
/// kernels (every stage bound to GPU threads, barriers placeable: compiler/lower/gpu) within
/// the target's limits (threads per block, each block and grid dimension, shared bytes per
/// block: codegen::gpu::LimitsOf). A dropped candidate is counted under its reason.

#include <map>
#include <optional>
#include <string>

#include "compiler/lower/gpu/lower_gpu.h"
#include "compiler/lower/lowered_func.h"
#include "compiler/schedule/schedule.h"
#include "server/search/search_strategy.h"

namespace tuned::search {

/// A candidate that can run on the target, as the cost model's features describe it.
struct CheckedCandidate {
  lower::LoweredFunc func;                        // its loop program
  std::optional<lower::gpu::GpuProgram> program;  // its kernels, on a GPU target
};

class CandidateCheck {
 public:
  explicit CandidateCheck(const SearchContext& context);

  /// The candidate's loop program (and kernels), or why it cannot run on the target (counted).
  StatusOr<CheckedCandidate> Check(const schedule::Schedule& sch);

  /// Candidates dropped so far, by reason: "lowering" (no loop program), "gpu_lowering" (no
  /// kernels: a stage not bound, a barrier under a thread-dependent branch, ...), or the name
  /// of the GPU limit exceeded (lower::gpu::GpuLimitName).
  const std::map<std::string, int>& dropped() const { return dropped_; }
  /// "threads_per_block=12 shared_bytes=3", or "none".
  std::string DroppedSummary() const;

 private:
  bool gpu_ = false;
  lower::gpu::GpuLimits limits_;
  std::map<std::string, int> dropped_;
};

}  // namespace tuned::search

#endif  // TUNED_SERVER_SEARCH_CANDIDATE_CHECK_H_

#ifndef TUNED_WORKER_CONTAINED_BUILD_H_
#define TUNED_WORKER_CONTAINED_BUILD_H_

/// \file
/// A candidate's compile (replay, lowering, LLVM) run in a forked build process with the build
/// timeout and the memory limit, so that a build that crashes inside LLVM (a signal) or never
/// returns ends one child: the worker, its other build slots and its timing go on. The child
/// writes the object file (or the compiler's error) into a shared mapping the slot made before
/// the fork; the worker links it (LinkCandidate). Why a fork per build rather than a
/// pre-forked build server: the fork inherits the worker's loaded LLVM, its workload and the
/// test builders at no cost and nothing needs restarting after a crash; its cost per build is
/// in docs/worker.md (`tuned_measure_bench --containment`).

#include <cstdint>
#include <functional>
#include <string>

#include "common/status.h"
#include "worker/builder.h"
#include "worker/sandbox.h"

namespace tuned::worker {

struct ContainedBuildOutcome {
  enum class Kind {
    kCompiled,  // `compiled` holds the candidate
    kFailed,    // the compiler refused it; `error` is its message
    kCrashed,   // the build process died of a signal or exited early; `error` says how
    kTimedOut,  // still running at the timeout; killed
  };
  Kind kind = Kind::kFailed;
  CompiledCandidate compiled;
  std::string error;
  double seconds = 0;  // fork to reap, less the time it was stopped
};

/// One build slot's process launcher: owns the mapping results come back through. Not
/// thread-safe; each concurrent build uses its own.
class BuildProcess {
 public:
  /// Object files larger than this are refused (the mapping is reserved, not committed).
  static constexpr size_t kMaxResultBytes = size_t{64} << 20;

  /// Runs `compile` in a child with `limits`, stopped through `pause` (if given) while
  /// kernels are timed. Errors only when no child could be started.
  StatusOr<ContainedBuildOutcome> Run(const std::function<StatusOr<CompiledCandidate>()>& compile,
                                      const SandboxLimits& limits, ChildPause* pause = nullptr);

 private:
  SharedMemory memory_;
};

}  // namespace tuned::worker

#endif  // TUNED_WORKER_CONTAINED_BUILD_H_

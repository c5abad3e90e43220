#ifndef TUNED_WORKER_REFERENCE_CACHE_H_
#define TUNED_WORKER_REFERENCE_CACHE_H_

/// \file
/// Per (workload key, seed): the workload rebuilt from its key, its seeded random inputs as
/// kernel buffers, and the reference output every candidate is checked against. Computed once
/// and kept for the next candidates of the same workload (a tuning task measures thousands),
/// least recently used first out.
///
/// Where the reference comes from (docs/worker.md): workloads of at
/// most `max_evaluator_flops` use the float64 evaluator (compiler/ir/evaluator.h, exact but
/// interpreted); larger ones run their default schedule (the unscheduled program with its
/// outer spatial loops parallel: ReferenceJob) compiled by the JIT, in a child like any
/// candidate, because the evaluator would take minutes on them and one core many seconds. Inputs are
/// rounded to their dtype first, so both references see exactly what a kernel sees.

#include <cstdint>
#include <functional>
#include <future>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/status.h"
#include "compiler/ir/workload.h"
#include "compiler/runtime/aligned_buffer.h"
#include "tuned/v1/measure.pb.h"
#include "tuned/v1/workload.pb.h"
#include "common/exclusive_gate.h"

namespace tuned::worker {

struct WorkloadData {
  std::shared_ptr<const ir::Workload> workload;
  uint64_t seed = 0;
  std::vector<runtime::AlignedBuffer> inputs;  // in argument order
  std::vector<double> reference;               // the expected output
  std::vector<double> reference_scale;         // a summed output's root sum of squares of its terms, or empty
  std::string reference_source;                // "float64 evaluator" or "compiled default schedule"
  double tolerance = 0;                        // of MaxRelativeError for the output dtype

  std::vector<const void*> InputPointers() const;

  /// A kernel's output checked against the reference: its largest relative error
  /// (ir::MaxRelativeError with the reference's scales), and a one-line reason where that
  /// exceeds the tolerance (empty where it does not).
  struct Verdict {
    double max_error = 0;
    std::string failure;
  };
  Verdict Verify(const std::vector<double>& output) const;
};

/// Rebuilds a wire workload from its key and checks that key_sha256 (when set) matches.
/// InvalidArgument for a bad key or hash, Unimplemented for custom computes.
StatusOr<std::shared_ptr<const ir::Workload>> RebuildWorkload(const v1::Workload& workload);

/// The job whose program computes a large workload's reference on the host CPU: its default
/// schedule, the unscheduled program with the outermost loop of each stage with spatial axes
/// parallel and nothing else changed, so it is as plain as the unscheduled one but uses every
/// core (a 4096³ matmul on one core would take minutes).
StatusOr<v1::MeasureJob> ReferenceJob(const std::shared_ptr<const ir::Workload>& workload);

class ReferenceCache {
 public:
  /// Computes the reference output by running a compiled kernel (isolated); the cache calls it
  /// holding nothing, so it may take the gate itself.
  using CompiledReference = std::function<StatusOr<std::vector<double>>(const WorkloadData& data)>;

  /// `gate` (must outlive the cache) is entered shared while the evaluator runs.
  ReferenceCache(size_t capacity, double max_evaluator_flops, ExclusiveGate& gate,
                 CompiledReference compiled);

  /// The data of `workload` with inputs from `seed`. Concurrent callers for one key wait for
  /// the first; a failed computation is not cached.
  StatusOr<std::shared_ptr<const WorkloadData>> Get(const v1::Workload& workload, uint64_t seed);

  /// How many entries have been computed so far.
  int computations() const;

 private:
  using Result = StatusOr<std::shared_ptr<const WorkloadData>>;
  StatusOr<std::shared_ptr<const WorkloadData>> Compute(std::shared_ptr<const ir::Workload> workload,
                                                        uint64_t seed);

  const size_t capacity_;
  const double max_evaluator_flops_;
  ExclusiveGate& gate_;
  CompiledReference compiled_;

  mutable std::mutex mu_;
  std::map<std::pair<std::string, uint64_t>, std::shared_future<Result>> entries_;
  std::list<std::pair<std::string, uint64_t>> lru_;  // most recent first
  int computations_ = 0;
};

}  // namespace tuned::worker

#endif  // TUNED_WORKER_REFERENCE_CACHE_H_

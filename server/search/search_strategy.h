#ifndef TUNED_SERVER_SEARCH_SEARCH_STRATEGY_H_
#define TUNED_SERVER_SEARCH_SEARCH_STRATEGY_H_

/// \file
/// The search's contract with the task that runs it. The task pulls batches of candidates,
/// sends them to measurement (the dispatcher, or an embedded engine: the search does not know
/// which) and feeds the results back:
///
///     task ──NextBatch(n)──▶ strategy ──▶ candidates (traces, never measured before)
///     task ──measure──▶ workers ──▶ results ──Update──▶ strategy (trains its cost model)
///
/// A strategy never returns a trace already measured for the workload and target, within its
/// own run (proposed before, or reported to Update) or in the database it was given: the task
/// trusts it and checks nothing again. Every strategy decides this with a MeasuredFilter
/// (measured_filter.h), which reads the database at most once per batch of candidates.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "compiler/ir/workload.h"
#include "compiler/schedule/trace.h"
#include "tuned/v1/measure.pb.h"
#include "tuned/v1/trace.pb.h"

namespace tuned::db {
class RecordStore;
}

namespace tuned::search {

struct Candidate {
  v1::Trace trace;          // what to measure
  std::string trace_hash;   // db::TraceHash(trace)
  double predicted_score = 0;  // the model's score (higher is faster); 0 for random picks
};

struct MeasuredCandidate {
  v1::Trace trace;
  v1::MeasureResult result;
};

struct SearchContext {
  std::shared_ptr<const ir::Workload> workload;
  std::string target;            // canonical target string
  int num_cores = 1;             // parallel loops are sized for this
  int vector_lanes = 8;          // fp32 lanes of the target's widest vector unit
  int vector_registers = 16;     // its registers (a register tile's accumulators must fit)
  uint64_t seed = 0;
  db::RecordStore* database = nullptr;  // optional: seeds the search, filters measured traces
  /// The task's timing-protocol version: records of another do not count as measured (0: any).
  uint32_t protocol_version = 0;
  /// The device model the task's jobs will run on, when known (every connected worker of the
  /// target has this one): records of another device do not count as measured ("": any).
  std::string device_model;
};

class SearchStrategy {
 public:
  virtual ~SearchStrategy() = default;
  /// Up to `n` candidates never measured before (see above) and never returned before; fewer
  /// (possibly none) when the design space is exhausted.
  virtual StatusOr<std::vector<Candidate>> NextBatch(int n) = 0;
  /// Results of measured candidates, in any order (on resume: what earlier runs of the task
  /// measured); the strategy never proposes them again.
  virtual Status Update(const std::vector<MeasuredCandidate>& results) = 0;
};

}  // namespace tuned::search

#endif  // TUNED_SERVER_SEARCH_SEARCH_STRATEGY_H_

#ifndef TUNED_COMPILER_LOWER_PIPELINE_H_
#define TUNED_COMPILER_LOWER_PIPELINE_H_

/// \file
/// The one way from a workload and a trace to a loop program: replay the trace through the
/// checked primitives, then lower. Every compiler client goes through here (the worker's
/// builder, the search, cost-model pre-training, apply-history-best, `tuned lower`), so they
/// agree on what a trace means:
///
///   - the empty trace (or an absent `v1::Trace`: the message's defaults) is the unscheduled
///     program: the workload's definition as serial loop nests;
///   - the default schedule is DefaultScheduleTrace(): what `tuned compile` builds when the log
///     has no usable record. It is a trace, so a tuning task measures it like any candidate and
///     reports its speed-up over exactly that program.
///
/// Errors name the step (invalid trace, replay, lowering); a replay error also names the
/// instruction (index and kind) that did not apply.

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "compiler/ir/workload.h"
#include "compiler/lower/lowered_func.h"
#include "compiler/schedule/schedule.h"
#include "compiler/schedule/trace.h"
#include "tuned/v1/trace.pb.h"

namespace tuned::lower {

/// Replays `trace` on a fresh schedule of `workload` and lowers it into a kernel named `name`.
StatusOr<LoweredFunc> LowerTrace(std::shared_ptr<const ir::Workload> workload,
                                 const schedule::Trace& trace, const std::string& name = "kernel");

/// LowerTrace of a wire trace; an absent message (version 0, nothing in it) is the empty trace.
StatusOr<LoweredFunc> LowerTraceProto(std::shared_ptr<const ir::Workload> workload,
                                      const v1::Trace& trace, const std::string& name = "kernel");

/// The wire trace parsed; an absent message is the empty trace (InvalidArgument for a trace of
/// an unknown version or instruction).
StatusOr<schedule::Trace> ParseTraceProto(const v1::Trace& trace);

/// A trace replayed with other decisions, and the program it lowers to (the search's step).
struct ReplayedCandidate {
  schedule::Trace trace;  // the replayed schedule's trace, with the decisions it used
  LoweredFunc func;
};
StatusOr<ReplayedCandidate> ReplayAndLower(std::shared_ptr<const ir::Workload> workload,
                                           const schedule::Trace& trace, uint64_t seed,
                                           const std::map<int, std::vector<int64_t>>& decisions);

/// The unscheduled program (the empty trace).
StatusOr<LoweredFunc> LowerUnscheduled(std::shared_ptr<const ir::Workload> workload,
                                       const std::string& name = "kernel");

/// The default schedule as a trace: the outermost loop of every stage that has spatial axes
/// runs in parallel, nothing else changes. Deterministic, so its trace hash identifies it.
StatusOr<schedule::Trace> DefaultScheduleTrace(std::shared_ptr<const ir::Workload> workload);

/// The default schedule of a GPU target as a trace: every stage that has spatial axes runs as
/// its own kernel, its spatial loops fused and split into (blockIdx.x, threadIdx.x) with
/// `threads_per_block` threads, each thread computing one element (reductions run serially in
/// the thread). A naive program, but a valid one on every GPU target; deterministic, like
/// DefaultScheduleTrace. A stage without spatial axes is left unbound (GPU lowering refuses it).
StatusOr<schedule::Trace> DefaultGpuScheduleTrace(std::shared_ptr<const ir::Workload> workload,
                                                  int64_t threads_per_block = 256);

/// DefaultScheduleTrace lowered into a kernel named `name`.
StatusOr<LoweredFunc> LowerDefaultSchedule(std::shared_ptr<const ir::Workload> workload,
                                           const std::string& name = "kernel");

}  // namespace tuned::lower

#endif  // TUNED_COMPILER_LOWER_PIPELINE_H_

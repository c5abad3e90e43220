#ifndef TUNED_COMPILER_SCHEDULE_TRACE_H_
#define TUNED_COMPILER_SCHEDULE_TRACE_H_

/// \file
/// A trace is a schedule as data: the primitives applied, in order, with their operands, and the
/// decisions of the sampling instructions. Operands refer to random variables (RVs: blocks,
/// loops, sampled integers) by the id an earlier instruction gave its outputs. Replaying a trace
/// on a fresh workload reproduces the schedule; replaying it with other decisions yields another
/// candidate, which is how the search mutates.
///
/// Format (version 1), per instruction kind: inputs / attrs / outputs
///   get_block            -            / str[name]                  / block
///   get_loops            block        / -                          / loops...
///   split                loop, factor... (rv|int|none) / -         / loops...
///   fuse                 loops...     / -                          / loop
///   reorder              loops...     / -                          / -
///   parallel|vectorize|unroll  loop   / -                          / -
///   bind                 loop         / str[thread tag]            / -
///   annotate             loop         / str[key], int[value]       / -
///   cache_read           block        / int[read index], str[scope] / block
///   cache_write          block        / str[scope]                 / block
///   rfactor              block, factor (rv|int) / -                / block
///   compute_at|reverse_compute_at  block, loop / -                 / -
///   block_layout         block, loop  / -                          / -
///   compute_inline|reverse_compute_inline  block / -               / -
///   decompose_reduction  block, loop  / -                          / -
///   sample_perfect_tile  loop         / int[n, max_innermost]      / ints...   decision: factors
///   sample_tile          loop         / int[n, max_innermost, max_padding_percent] / ints...
///                                                                     decision: factors
///   sample_categorical   -            / int[candidates], float[probs] / int    decision: [index]
///   sample_compute_location  block    / -                          / loop      decision: [index]

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"

namespace tuned::v1 {
class Trace;
}

namespace tuned::schedule {

inline constexpr uint32_t kTraceVersion = 1;

enum class InstKind : uint8_t {
  kGetBlock, kGetLoops, kSplit, kFuse, kReorder, kParallel, kVectorize, kUnroll, kBind,
  kAnnotate, kCacheRead, kCacheWrite, kComputeAt, kReverseComputeAt, kComputeInline,
  kReverseComputeInline, kDecomposeReduction, kSamplePerfectTile, kSampleCategorical,
  kSampleComputeLocation, kSampleTile, kRFactor, kBlockLayout
};
const char* InstKindName(InstKind kind);
StatusOr<InstKind> ParseInstKind(std::string_view name);
bool IsSampling(InstKind kind);

struct TraceArg {
  enum class Kind : uint8_t { kRV, kInt, kNone };
  Kind kind = Kind::kNone;
  int64_t value = 0;  // RV id or literal
  static TraceArg RV(uint32_t id) { return {Kind::kRV, int64_t(id)}; }
  static TraceArg Int(int64_t v) { return {Kind::kInt, v}; }
  static TraceArg None() { return {Kind::kNone, 0}; }
  bool operator==(const TraceArg&) const = default;
};

struct Instruction {
  InstKind kind;
  std::vector<TraceArg> inputs;
  std::vector<int64_t> int_attrs;
  std::vector<double> float_attrs;
  std::vector<std::string> str_attrs;
  std::vector<uint32_t> outputs;
  bool operator==(const Instruction&) const = default;
};

struct Trace {
  std::vector<Instruction> instructions;
  std::map<int, std::vector<int64_t>> decisions;  // by instruction index
  bool operator==(const Trace&) const = default;

  /// Readable text, one instruction per line: "3: v4, v5 = split(v2, v3, none)".
  std::string ToString() const;
};

void TraceToProto(const Trace& trace, v1::Trace* proto);
/// Validates structure (known kinds, RVs defined before use, decisions of sampling
/// instructions only); semantic validity is checked on replay.
StatusOr<Trace> TraceFromProto(const v1::Trace& proto);
std::string TraceToJson(const Trace& trace);
StatusOr<Trace> TraceFromJson(std::string_view json);

}  // namespace tuned::schedule

#endif  // TUNED_COMPILER_SCHEDULE_TRACE_H_

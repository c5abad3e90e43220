#ifndef TUNED_TESTS_FUZZ_FUZZ_TRACE_INPUT_H_
#define TUNED_TESTS_FUZZ_FUZZ_TRACE_INPUT_H_

/// \file
/// The input format of fuzz_trace, shared with the generator of its corpus: one byte choosing
/// a small workload (modulo the list below), then a wire trace (`v1::Trace`, binary protobuf)
/// as a worker receives it.

#include <cstdint>
#include <string>
#include <vector>

namespace tuned::fuzz {

/// Small workloads, one per kind of loop nest (reduction, window, multi-stage, narrow types),
/// small enough for the interpreter to run in a millisecond.
const std::vector<std::string>& TraceWorkloadSpecs();

}  // namespace tuned::fuzz

#endif  // TUNED_TESTS_FUZZ_FUZZ_TRACE_INPUT_H_

#ifndef TUNED_TESTS_UNIT_WORKER_WORKER_TEST_UTIL_H_
#define TUNED_TESTS_UNIT_WORKER_WORKER_TEST_UTIL_H_

/// \file
/// Jobs and protocols for the worker tests: small workloads and a short protocol, so the suite
/// stays fast.

#include <memory>
#include <string>

#include "compiler/schedule/schedule.h"
#include "tuned/v1/measure.pb.h"
#include "worker/measurement_engine.h"

namespace tuned::worker::testing {

inline constexpr char kSmallMatmul[] = "matmul(M=32,N=32,K=32,dtype=float32)";

/// The defaults with few repeats and a 1 ms minimum repeat.
v1::MeasureConfig FastConfig();

/// A job measuring `spec` with `trace` (the unscheduled program when empty) on the engine's target.
v1::MeasureJob MakeJob(const std::string& spec, const std::string& job_id,
                       const schedule::Trace& trace = {});

/// A valid non-trivial trace for `spec`: the output stage's outermost loop split by 4 and its
/// outer part made parallel.
schedule::Trace TiledTrace(const std::string& spec);

/// An engine (with the real builder) or a test failure.
std::unique_ptr<MeasurementEngine> MakeEngine(const EngineOptions& options = {});

}  // namespace tuned::worker::testing

#endif  // TUNED_TESTS_UNIT_WORKER_WORKER_TEST_UTIL_H_

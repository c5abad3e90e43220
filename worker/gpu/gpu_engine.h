#ifndef TUNED_WORKER_GPU_GPU_ENGINE_H_
#define TUNED_WORKER_GPU_GPU_ENGINE_H_

/// \file
/// The measurement engine of a GPU target (today: opencl). The same contract as the CPU
/// engine (worker/measurement_engine.h), measured differently:
///   - a candidate is built on the worker's CPU in a forked build process (contained_build.h:
///     a crash is COMPILE_ERROR, a hang BUILD_TIMEOUT), into program source and launches
///     (gpu_builder.h);
///   - it runs in the runner process (runner_process.h), started by exec and kept across jobs:
///     the inputs of a workload and seed are uploaded once per runner, the program is built
///     there (a build error is COMPILE_ERROR), run once into an output poisoned with 0xff
///     bytes, and timed with profiling events (warm-up, runs per repeat grown to
///     min_repeat_ms, every repeat stored, the median ranks);
///   - a runner that crashes (an out-of-bounds kernel) is RUNTIME_ERROR naming the signal, one
///     still running at the run timeout (plus the build timeout, the program build being in
///     the runner) is killed: TIMEOUT; a sticky device error is RUNTIME_ERROR. Then a fresh
///     runner serves the next job;
///   - every output is checked against the workload's reference (reference_cache.h; large
///     workloads: their unscheduled program compiled for the host CPU and run isolated);
///   - every result carries the runner's DeviceInfo (device name, compute units, driver and
///     OpenCL versions, memory).
/// Jobs run one at a time, in order.

#include <memory>

#include "common/status.h"
#include "target/target.h"
#include "worker/gpu/gpu_builder.h"
#include "worker/measurement_engine.h"

namespace tuned::worker::gpu {

/// An engine for `target` (an opencl target) whose candidates come from `factory`. Fails when
/// the runner cannot start or open the target's device.
StatusOr<std::unique_ptr<MeasurementEngine>> CreateGpuMeasurementEngine(const EngineOptions& options,
                                                                        const target::Target& target,
                                                                        const GpuBuilderFactory& factory);

/// The runner executable of `target`: `options.gpu_runner`, else `tuned-opencl-runner` in the
/// folder of the running executable.
std::string GpuRunnerPath(const EngineOptions& options);

}  // namespace tuned::worker::gpu

#endif  // TUNED_WORKER_GPU_GPU_ENGINE_H_

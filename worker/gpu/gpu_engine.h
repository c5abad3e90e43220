#ifndef TUNED_WORKER_GPU_GPU_ENGINE_H_
#define TUNED_WORKER_GPU_GPU_ENGINE_H_

/// \file
/// The measurement engine of a GPU target (cuda or opencl). The same contract as the CPU
/// engine (worker/measurement_engine.h), measured differently:
///   - a candidate is built on the worker's CPU in a forked build process (contained_build.h:
///     a crash is COMPILE_ERROR, a hang BUILD_TIMEOUT), into program source and launches
///     (gpu_builder.h); for cuda the cubin too (NVRTC, cuda_candidate.h), with each kernel's
///     registers and spills, which the result records;
///   - it runs in the runner process (runner_process.h: tuned-cuda-runner on the CUDA driver,
///     tuned-opencl-runner on OpenCL), started by exec and kept across jobs: the inputs of a
///     workload and seed are uploaded once per runner, an OpenCL program is built there (a
///     build error is COMPILE_ERROR), the candidate runs once into an output poisoned with 0xff
///     bytes and is timed with device events (warm-up, runs per repeat grown to
///     min_repeat_ms, every repeat stored, the median ranks; CUDA flushes the L2 before each
///     repeat);
///   - a runner that crashes (an out-of-bounds kernel) is RUNTIME_ERROR naming the signal, one
///     still running at the run timeout (plus the build timeout, the program build being in
///     the runner) is killed: TIMEOUT; a sticky device error is RUNTIME_ERROR. Then a fresh
///     runner serves the next job;
///   - every output is checked against the workload's reference (reference_cache.h; large
///     workloads: their default schedule compiled for the host CPU and run isolated);
///   - every result carries the runner's DeviceInfo (device name, compute units, driver
///     version, the device compiler's version (OpenCL's; NVRTC's for cuda), memory; for cuda
///     compute capability, L2 and clocks as features).
/// Candidates are built `build_slots` at a time on the worker's CPU while another runs on the
/// device, so the device does not wait for a compile; where the device is this CPU (PoCL), a
/// build waits for the run instead, so it cannot disturb the timing. Runs are one at a time.

#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "target/target.h"
#include "worker/gpu/gpu_builder.h"
#include "worker/measurement_engine.h"

namespace tuned::worker::gpu {

/// An engine for `target` (a cuda or opencl target) whose candidates come from `factory`.
/// Fails when the runner cannot start or open the target's device (the runner's one line: no
/// CUDA driver, no such device, a device of another arch).
StatusOr<std::unique_ptr<MeasurementEngine>> CreateGpuMeasurementEngine(const EngineOptions& options,
                                                                        const target::Target& target,
                                                                        const GpuBuilderFactory& factory);

/// The runner of `target` and its arguments: `options.gpu_runner`, else `tuned-cuda-runner` or
/// `tuned-opencl-runner` in the folder of the running executable; then the target, and for cuda
/// `--device=N` (options.gpu_device).
std::vector<std::string> GpuRunnerArgv(const EngineOptions& options, const target::Target& target);

}  // namespace tuned::worker::gpu

#endif  // TUNED_WORKER_GPU_GPU_ENGINE_H_

#ifndef TUNED_WORKER_CALIBRATION_H_
#define TUNED_WORKER_CALIBRATION_H_

/// \file
/// The worker's calibration kernel: one fixed program (a fixed workload in its default
/// schedule, its job made once) timed by the engine like any candidate, with a short protocol
/// and no verification. Its figure moving on the same worker means the machine changed (a
/// noisy neighbour, a clock change), not the candidates: the server compares it with the
/// worker's baseline (docs/server.md, "Drift").

#include <memory>

#include "common/status.h"
#include "tuned/v1/worker_service.pb.h"
#include "worker/measurement_engine.h"

namespace tuned::worker {

class CalibrationKernel {
 public:
  /// The job of the kernel for `engine`'s target; `engine` must outlive the object.
  static StatusOr<std::unique_ptr<CalibrationKernel>> Create(MeasurementEngine& engine);

  /// Times the kernel once (waits for the engine's timing gate, like a job). An error when the
  /// kernel did not measure OK on this target.
  StatusOr<v1::Calibration> Measure();

 private:
  CalibrationKernel(MeasurementEngine& engine, v1::MeasureJob job)
      : engine_(engine), job_(std::move(job)) {}

  MeasurementEngine& engine_;
  const v1::MeasureJob job_;
};

}  // namespace tuned::worker

#endif  // TUNED_WORKER_CALIBRATION_H_

#include "worker/calibration.h"

#include "compiler/ir/op_library.h"
#include "compiler/lower/pipeline.h"
#include "worker/workload_message.h"

namespace tuned::worker {
namespace {

// A fixed workload of a few milliseconds on one core: long enough to time steadily, short
// enough to run between every batch. Changing it changes every worker's baseline.
constexpr char kCalibrationSpec[] = "matmul(M=128,N=128,K=128,dtype=float32)";

}  // namespace

StatusOr<std::unique_ptr<CalibrationKernel>> CalibrationKernel::Create(MeasurementEngine& engine) {
  TUNED_ASSIGN_OR_RETURN(ir::Workload parsed, ir::ParseWorkloadSpec(kCalibrationSpec));
  auto workload = std::make_shared<const ir::Workload>(std::move(parsed));
  // A GPU target cannot run the CPU default schedule (its loop runs in parallel, unbound).
  const v1::TargetKind kind = engine.target().kind();
  const bool gpu = kind == v1::TARGET_KIND_CUDA || kind == v1::TARGET_KIND_OPENCL;
  TUNED_ASSIGN_OR_RETURN(schedule::Trace trace, gpu ? lower::DefaultGpuScheduleTrace(workload)
                                                    : lower::DefaultScheduleTrace(workload));
  v1::MeasureJob job;
  job.set_job_id("calibration");
  job.set_task_id("calibration");
  *job.mutable_workload() = WorkloadMessage(*workload);
  *job.mutable_target() = engine.target();
  schedule::TraceToProto(trace, job.mutable_trace());
  v1::MeasureConfig* config = job.mutable_config();
  config->set_repeat(7);
  config->set_min_repeat_ms(5);
  config->set_verify(false);  // a fixed program: only its time matters
  return std::unique_ptr<CalibrationKernel>(new CalibrationKernel(engine, std::move(job)));
}

StatusOr<v1::Calibration> CalibrationKernel::Measure() {
  TUNED_ASSIGN_OR_RETURN(v1::MeasureResult result, engine_.Measure(job_));
  if (result.status() != v1::MEASURE_STATUS_OK) {
    return FailedPreconditionError("calibration kernel: " +
                                   v1::MeasureStatus_Name(result.status()) + ": " + result.error());
  }
  v1::Calibration calibration;
  calibration.set_median_seconds(result.median_seconds());
  calibration.set_repeat_cv(result.repeat_cv());
  return calibration;
}

}  // namespace tuned::worker

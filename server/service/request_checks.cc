#include "server/service/request_checks.h"

#include <cmath>

namespace tuned::server {
namespace {

constexpr size_t kMaxIdChars = 256;
constexpr size_t kMaxTaskIdChars = 128;
constexpr size_t kMaxTargetChars = 4096;
constexpr int kMaxSlots = 1024;
constexpr int kMaxRepeats = 100000;
constexpr int kMaxHeartbeatJobs = 100000;
constexpr size_t kMaxErrorChars = 64 * 1024;

bool FiniteNonNegative(double x) { return std::isfinite(x) && x >= 0; }

}  // namespace

Status CheckWorkerHello(const v1::WorkerHello& hello) {
  if (hello.worker_id().empty() || hello.worker_id().size() > kMaxIdChars) {
    return InvalidArgumentError("worker hello: worker_id must have 1 to 256 characters");
  }
  if (hello.target().target().empty() || hello.target().target().size() > kMaxTargetChars) {
    return InvalidArgumentError("worker hello from '" + hello.worker_id() +
                                "': target must have 1 to 4096 characters");
  }
  if (hello.slots() == 0 || hello.slots() > kMaxSlots) {
    return InvalidArgumentError("worker hello from '" + hello.worker_id() + "': slots " +
                                std::to_string(hello.slots()) + " is outside [1, 1024]");
  }
  return Status::Ok();
}

Status CheckMeasureResult(const v1::MeasureResult& result) {
  if (result.job_id().empty() || result.job_id().size() > kMaxIdChars) {
    return InvalidArgumentError("measure result: job_id must have 1 to 256 characters");
  }
  const std::string where = "measure result of job " + result.job_id();
  if (!v1::MeasureStatus_IsValid(result.status()) ||
      result.status() == v1::MEASURE_STATUS_UNSPECIFIED ||
      result.status() == v1::MEASURE_STATUS_WORKER_LOST) {
    return InvalidArgumentError(where + ": status " + std::to_string(int(result.status())) +
                                " is not a status a worker may report");
  }
  if (result.repeat_seconds_size() > kMaxRepeats) {
    return InvalidArgumentError(where + ": too many repeats");
  }
  for (double t : result.repeat_seconds()) {
    if (!FiniteNonNegative(t)) {
      return InvalidArgumentError(where + ": repeat time is not a finite non-negative number");
    }
  }
  if (!FiniteNonNegative(result.median_seconds()) || !FiniteNonNegative(result.build_seconds())) {
    return InvalidArgumentError(where + ": times must be finite and non-negative");
  }
  if (std::isnan(result.max_error())) return InvalidArgumentError(where + ": max_error is NaN");
  if (result.status() == v1::MEASURE_STATUS_OK &&
      (result.median_seconds() <= 0 || result.repeat_seconds_size() == 0)) {
    return InvalidArgumentError(where + ": an OK result needs repeat times and a positive median");
  }
  if (result.error().size() > kMaxErrorChars) {
    return InvalidArgumentError(where + ": error too long");
  }
  return Status::Ok();
}

Status CheckWorkerMessage(const v1::WorkerMessage& message) {
  switch (message.message_case()) {
    case v1::WorkerMessage::kHello:
      return CheckWorkerHello(message.hello());
    case v1::WorkerMessage::kResult:
      return CheckMeasureResult(message.result());
    case v1::WorkerMessage::kHeartbeat:
      if (message.heartbeat().running_job_ids_size() > kMaxHeartbeatJobs) {
        return InvalidArgumentError("heartbeat lists too many jobs");
      }
      return Status::Ok();
    case v1::WorkerMessage::kDrain:
      if (message.drain().reason().size() > kMaxErrorChars) {
        return InvalidArgumentError("drain reason too long");
      }
      return Status::Ok();
    case v1::WorkerMessage::kCalibration: {
      const v1::Calibration& calibration = message.calibration();
      if (!std::isfinite(calibration.median_seconds()) || calibration.median_seconds() <= 0) {
        return InvalidArgumentError("calibration: median_seconds must be finite and positive");
      }
      if (!FiniteNonNegative(calibration.repeat_cv())) {
        return InvalidArgumentError("calibration: repeat_cv must be finite and non-negative");
      }
      return Status::Ok();
    }
    case v1::WorkerMessage::MESSAGE_NOT_SET:
      break;
  }
  return InvalidArgumentError(
      "empty worker message (expected hello, result, heartbeat, drain or calibration)");
}

Status CheckTaskId(const std::string& task_id) {
  if (task_id.empty()) return InvalidArgumentError("empty task_id");
  if (task_id.size() > kMaxTaskIdChars) return InvalidArgumentError("task_id too long");
  return Status::Ok();
}

Status CheckBestRecordsRequest(const v1::BestRecordsRequest& request) {
  if (request.workload_key().empty()) return InvalidArgumentError("best records: empty workload_key");
  if (request.target().empty()) return InvalidArgumentError("best records: empty target");
  if (request.limit() > kMaxBestRecords) {
    return InvalidArgumentError("best records: limit " + std::to_string(request.limit()) +
                                " is larger than " + std::to_string(kMaxBestRecords));
  }
  return Status::Ok();
}

Status CheckListRecordsRequest(const v1::ListRecordsRequest& request) {
  if (request.limit() > kMaxListedRecords) {
    return InvalidArgumentError("list records: limit is larger than " +
                                std::to_string(kMaxListedRecords));
  }
  if (request.offset() > kMaxListOffset) {
    return InvalidArgumentError("list records: offset is larger than " +
                                std::to_string(kMaxListOffset));
  }
  return Status::Ok();
}

}  // namespace tuned::server

#ifndef TUNED_SERVER_SERVICE_REQUEST_CHECKS_H_
#define TUNED_SERVER_SERVICE_REQUEST_CHECKS_H_

/// \file
/// Every check of the content of a request a service receives, in one place: what a worker
/// sends on its stream, and the task ids and record queries of clients. (A task's spec is
/// checked by the task manager, TaskManager::NormalizeSpec, which also fills in defaults.)
/// Each check is a pure function of the message, so the services and the fuzz target of
/// tests/fuzz/ run the same code; errors are InvalidArgument with one line naming the field.
/// What depends on the stream's state (a result before the hello) stays in the service.

#include <cstdint>
#include <string>

#include "common/status.h"
#include "tuned/v1/database_service.pb.h"
#include "tuned/v1/worker_service.pb.h"

namespace tuned::server {

/// Records a BestRecords or ListRecords call may return, and ListRecords' default.
inline constexpr uint32_t kMaxBestRecords = 1000;
inline constexpr uint32_t kMaxListedRecords = 10000;
inline constexpr uint32_t kDefaultListedRecords = 100;
inline constexpr uint32_t kMaxListOffset = 1000000;

/// A worker's hello, result, heartbeat, drain or calibration; an empty message is refused.
Status CheckWorkerMessage(const v1::WorkerMessage& message);
Status CheckWorkerHello(const v1::WorkerHello& hello);
Status CheckMeasureResult(const v1::MeasureResult& result);

Status CheckTaskId(const std::string& task_id);
Status CheckBestRecordsRequest(const v1::BestRecordsRequest& request);
Status CheckListRecordsRequest(const v1::ListRecordsRequest& request);

}  // namespace tuned::server

#endif  // TUNED_SERVER_SERVICE_REQUEST_CHECKS_H_

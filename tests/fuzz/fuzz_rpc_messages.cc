// Messages from workers and clients, decoded from fuzzed bytes and passed to the checks the
// services run (server/service/request_checks.h, TaskManager::NormalizeSpec), then, where
// accepted, to the component the service hands them to: the dispatcher (a worker's stream of
// messages) and the tuning database (record queries).
//
// Input: one byte naming the kind, then the kind's bytes:
//   0  a worker stream: messages, each a 2-byte little-endian length and a WorkerMessage
//   1  SubmitTaskRequest       2  BestRecordsRequest       3  ListRecordsRequest
//   4  GetTaskRequest

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "common/logging.h"
#include "fuzz_check.h"
#include "server/dispatch/dispatcher.h"
#include "server/service/request_checks.h"
#include "server/tasks/task_manager.h"
#include "tuned/v1/database_service.pb.h"
#include "tuned/v1/tuning_service.pb.h"
#include "tuned/v1/worker_service.pb.h"
#include "tuning_db/database.h"

using namespace tuned;

namespace {

// The worker's side of the stream: jobs and cancels are dropped, as on a stream that is gone.
class DiscardingConnection final : public dispatch::WorkerConnection {
 public:
  void SendJob(const v1::MeasureJob&) override {}
  void SendCancel(const std::string&) override {}
  void Close(const Status&) override { closed = true; }
  bool closed = false;
};

// One database and task manager per process: the checks are pure, the queries read only.
struct Services {
  std::unique_ptr<db::Database> database;
  dispatch::Dispatcher dispatcher;
  std::unique_ptr<tasks::TaskManager> tasks;

  Services() {
    const std::string path = (std::filesystem::temp_directory_path() /
                              ("tuned-fuzz-rpc-" + std::to_string(getpid()) + ".db"))
                                 .string();
    std::filesystem::remove(path);
    database = db::OpenSqliteDatabase(path).value();
    tasks::TaskManagerOptions options;
    options.strategy_factory = [](const search::SearchContext&, const v1::SearchOptions&)
        -> StatusOr<std::unique_ptr<search::SearchStrategy>> {
      return UnimplementedError("the fuzz target starts no search");
    };
    options.default_target = "llvm -mcpu=x86-64";
    tasks = std::make_unique<tasks::TaskManager>(*database, *database, dispatcher, options);
  }
};

Services& Shared() {
  static Services* services = new Services();  // never destroyed: libFuzzer exits by _exit
  return *services;
}

// Two jobs queued for the target a fuzzed hello most likely names, so results can match.
void SubmitJobs(dispatch::Dispatcher& dispatcher) {
  for (const char* id : {"j0", "j1"}) {
    v1::MeasureJob job;
    job.set_job_id(id);
    job.set_task_id("t");
    job.mutable_target()->set_target("llvm");
    fuzz::Check(dispatcher.Submit(job, [](const v1::MeasureResult&) {}).ok(), "submit failed");
  }
}

void WorkerStream(const uint8_t* data, size_t size) {
  dispatch::Dispatcher dispatcher;
  SubmitJobs(dispatcher);
  DiscardingConnection connection;
  uint64_t session = 0;
  size_t at = 0;
  while (at + 2 <= size && !connection.closed) {
    const size_t length = size_t(data[at]) | size_t(data[at + 1]) << 8;
    at += 2;
    if (length > size - at) break;
    v1::WorkerMessage message;
    const bool parsed = message.ParseFromArray(data + at, int(length));
    at += length;
    if (!parsed || !server::CheckWorkerMessage(message).ok()) break;  // the stream ends
    switch (message.message_case()) {
      case v1::WorkerMessage::kHello: {
        if (session != 0) return;
        StatusOr<uint64_t> registered = dispatcher.RegisterWorker(message.hello(), "fuzz", &connection);
        fuzz::Check(registered.ok(), "a checked hello is refused by the dispatcher: " +
                                         (registered.ok() ? std::string() : registered.status().message()));
        session = *registered;
        break;
      }
      case v1::WorkerMessage::kResult:
        if (session != 0) dispatcher.HandleResult(session, message.result());
        break;
      case v1::WorkerMessage::kHeartbeat:
        if (session != 0) dispatcher.HandleHeartbeat(session, message.heartbeat());
        break;
      case v1::WorkerMessage::kDrain:
        if (session != 0) dispatcher.HandleDrain(session, message.drain().reason());
        break;
      case v1::WorkerMessage::kCalibration:
        if (session != 0) {
          StatusOr<dispatch::CalibrationEvent> event =
              dispatcher.HandleCalibration(session, message.calibration());
          fuzz::Check(event.ok(), "a checked calibration is refused by the dispatcher: " +
                                      (event.ok() ? std::string() : event.status().message()));
        }
        break;
      case v1::WorkerMessage::MESSAGE_NOT_SET:
        break;
    }
  }
  if (session != 0) dispatcher.UnregisterWorker(session, "fuzz stream ended");
  const dispatch::DispatcherStats stats = dispatcher.Stats();
  fuzz::Check(stats.leased == 0, "a lease survives its worker");
  fuzz::Check(stats.queued + stats.completed == stats.submitted,
              "jobs lost: " + std::to_string(stats.submitted) + " submitted, " +
                  std::to_string(stats.queued) + " queued, " + std::to_string(stats.completed) +
                  " completed");
}

template <typename Message>
bool Parse(Message& message, const uint8_t* data, size_t size) {
  return message.ParseFromArray(data, int(size));
}

}  // namespace

// Quiet: a log line per input (schema migrations, workers joining) would dominate the run.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  (void)InitLogging("off");
  fuzz::QuietProtobufLog();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t kind = data[0];
  ++data;
  --size;
  switch (kind % 5) {
    case 0:
      WorkerStream(data, size);
      break;
    case 1: {
      v1::SubmitTaskRequest request;
      if (!Parse(request, data, size)) break;
      StatusOr<v1::TaskSpec> spec = Shared().tasks->NormalizeSpec(request.spec());
      if (spec.ok()) {
        // A normalised spec is a fixed point: normalising it again changes nothing.
        StatusOr<v1::TaskSpec> again = Shared().tasks->NormalizeSpec(*spec);
        fuzz::Check(again.ok(), "a normalised spec is refused: " +
                                    (again.ok() ? std::string() : again.status().message()));
        fuzz::Check(again->SerializeAsString() == spec->SerializeAsString(),
                    "normalising a normalised spec changes it");
      }
      break;
    }
    case 2: {
      v1::BestRecordsRequest request;
      if (!Parse(request, data, size) || !server::CheckBestRecordsRequest(request).ok()) break;
      db::BestRecordsQuery query;
      query.workload_key = request.workload_key();
      query.target = request.target();
      query.limit = request.limit() == 0 ? 1 : int(request.limit());
      (void)Shared().database->GetBestRecords(query);
      break;
    }
    case 3: {
      v1::ListRecordsRequest request;
      if (!Parse(request, data, size) || !server::CheckListRecordsRequest(request).ok()) break;
      db::RecordFilter filter;
      filter.workload_key = request.workload_key();
      filter.task_id = request.task_id();
      filter.limit = int(request.offset() + (request.limit() == 0 ? server::kDefaultListedRecords
                                                                  : request.limit()));
      (void)Shared().database->ListRecords(filter);
      break;
    }
    case 4: {
      v1::GetTaskRequest request;
      if (!Parse(request, data, size) || !server::CheckTaskId(request.task_id()).ok()) break;
      StatusOr<v1::TaskStatus> task = Shared().tasks->Get(request.task_id());
      fuzz::Check(!task.ok(), "a task exists in a database nothing submitted to");
      break;
    }
  }
  return 0;
}

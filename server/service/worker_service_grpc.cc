// WorkerService over the dispatcher. Stream design: each worker holds one bidirectional stream
// (it connects out, so the server needs no worker addresses). The first message is a hello;
// the server answers with the heartbeat interval and then pushes jobs as the dispatcher leases
// them; the worker sends results and heartbeats on the same stream. One stream per worker
// keeps job order, lease renewal and liveness on one connection: when it breaks, the
// dispatcher learns at once and requeues the worker's leases. A malformed message ends the
// stream with INVALID_ARGUMENT (its leases are requeued); the server itself never trusts a
// field it did not validate.

#include <deque>
#include <mutex>

#include "common/logging.h"
#include "server/dispatch/dispatcher.h"
#include "server/service/grpc_util.h"
#include "server/service/request_checks.h"
#include "tuned/v1/worker_service.grpc.pb.h"

namespace tuned::server {
namespace {

class ConnectReactor final : public grpc::ServerBidiReactor<v1::WorkerMessage, v1::ServerMessage>,
                             public dispatch::WorkerConnection {
 public:
  ConnectReactor(dispatch::Dispatcher& dispatcher, const AccessPolicy& access,
                 grpc::CallbackServerContext* context)
      : dispatcher_(dispatcher), peer_(context->peer()) {
    if (grpc::Status status = Authorize(context, access, Role::kWorker); !status.ok()) {
      Logger("server")->warn("worker refused peer={} reason='{}'", peer_, status.error_message());
      std::lock_guard<std::mutex> lock(mu_);
      FinishLocked(status);
      return;
    }
    StartRead(&in_);
  }

  // --- dispatch::WorkerConnection (called with the dispatcher's lock held). ---
  void SendJob(const v1::MeasureJob& job) override {
    v1::ServerMessage message;
    *message.mutable_job() = job;
    Enqueue(std::move(message));
  }
  void SendCancel(const std::string& job_id) override {
    v1::ServerMessage message;
    message.set_cancel_job_id(job_id);
    Enqueue(std::move(message));
  }
  void Close(const Status& reason) override {
    std::lock_guard<std::mutex> lock(mu_);
    session_ = 0;  // Already unregistered by the dispatcher.
    FinishLocked(rpc::ToGrpcStatus(reason));
  }

  // --- Reactions. ---
  void OnReadDone(bool ok) override {
    if (!ok) {
      EndSession("stream closed", grpc::Status::OK);
      return;
    }
    Status status = Handle(in_);
    if (!status.ok()) {
      Logger("server")->warn("worker stream rejected peer={} reason='{}'", peer_, status.message());
      EndSession("sent an invalid message", rpc::ToGrpcStatus(status));
      return;
    }
    StartRead(&in_);
  }

  void OnWriteDone(bool ok) override {
    std::lock_guard<std::mutex> lock(mu_);
    writing_ = false;
    if (!ok) {
      outbox_.clear();  // The stream is broken; the read side ends the session.
      return;
    }
    outbox_.pop_front();
    if (!outbox_.empty() && !finish_requested_) {
      writing_ = true;
      StartWrite(&outbox_.front());
    } else if (finish_requested_ && !finished_) {
      finished_ = true;
      Finish(finish_status_);
    }
  }

  void OnDone() override {
    Unregister("stream done");
    delete this;
  }

 private:
  // The stream's order first (hello once, then the rest), then the message's content.
  Status Handle(const v1::WorkerMessage& message) {
    const uint64_t session = Session();
    const auto kind = message.message_case();
    if (kind == v1::WorkerMessage::kHello && session != 0) {
      return InvalidArgumentError("worker sent a second hello");
    }
    if (kind != v1::WorkerMessage::kHello && kind != v1::WorkerMessage::MESSAGE_NOT_SET &&
        session == 0) {
      return InvalidArgumentError("worker sent a " + std::string(MessageName(kind)) +
                                  " before its hello");
    }
    TUNED_RETURN_IF_ERROR(CheckWorkerMessage(message));
    switch (kind) {
      case v1::WorkerMessage::kHello: {
        v1::ServerMessage interval;
        interval.set_heartbeat_interval_ms(uint32_t(dispatcher_.options().heartbeat_interval_ms));
        Enqueue(std::move(interval));  // Before registering: the interval precedes any job.
        TUNED_ASSIGN_OR_RETURN(uint64_t registered,
                               dispatcher_.RegisterWorker(message.hello(), peer_, this));
        std::lock_guard<std::mutex> lock(mu_);
        session_ = registered;
        return Status::Ok();
      }
      case v1::WorkerMessage::kResult:
        dispatcher_.HandleResult(session, message.result());
        return Status::Ok();
      case v1::WorkerMessage::kHeartbeat:
        dispatcher_.HandleHeartbeat(session, message.heartbeat());
        return Status::Ok();
      case v1::WorkerMessage::kDrain:
        dispatcher_.HandleDrain(session, message.drain().reason());
        return Status::Ok();
      case v1::WorkerMessage::kCalibration:
        return dispatcher_.HandleCalibration(session, message.calibration()).status();
      case v1::WorkerMessage::MESSAGE_NOT_SET:
        break;
    }
    return Status::Ok();  // CheckWorkerMessage refused the empty message.
  }

  static const char* MessageName(v1::WorkerMessage::MessageCase kind) {
    switch (kind) {
      case v1::WorkerMessage::kResult: return "result";
      case v1::WorkerMessage::kHeartbeat: return "heartbeat";
      case v1::WorkerMessage::kDrain: return "drain";
      case v1::WorkerMessage::kCalibration: return "calibration";
      default: return "message";
    }
  }

  uint64_t Session() {
    std::lock_guard<std::mutex> lock(mu_);
    return session_;
  }

  void Unregister(std::string_view reason) {
    uint64_t session = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      std::swap(session, session_);
    }
    // Outside mu_: the dispatcher calls into this object with its own lock held.
    if (session != 0) dispatcher_.UnregisterWorker(session, reason);
  }

  void EndSession(std::string_view reason, const grpc::Status& status) {
    Unregister(reason);
    std::lock_guard<std::mutex> lock(mu_);
    FinishLocked(status);
  }

  void Enqueue(v1::ServerMessage message) {
    std::lock_guard<std::mutex> lock(mu_);
    if (finish_requested_) return;
    outbox_.push_back(std::move(message));
    if (!writing_) {
      writing_ = true;
      StartWrite(&outbox_.front());
    }
  }

  // Finishes now, or after the write in flight completes.
  void FinishLocked(const grpc::Status& status) {
    if (finish_requested_) return;
    finish_requested_ = true;
    finish_status_ = status;
    if (!writing_) {
      finished_ = true;
      Finish(status);
    }
  }

  dispatch::Dispatcher& dispatcher_;
  const std::string peer_;
  v1::WorkerMessage in_;

  std::mutex mu_;
  uint64_t session_ = 0;
  std::deque<v1::ServerMessage> outbox_;  // front() is being written while writing_
  bool writing_ = false;
  bool finish_requested_ = false;
  bool finished_ = false;
  grpc::Status finish_status_;
};

class WorkerServiceImpl final : public v1::WorkerService::CallbackService {
 public:
  WorkerServiceImpl(dispatch::Dispatcher& dispatcher, AccessPolicy access)
      : dispatcher_(dispatcher), access_(std::move(access)) {}

  grpc::ServerBidiReactor<v1::WorkerMessage, v1::ServerMessage>* Connect(
      grpc::CallbackServerContext* context) override {
    return new ConnectReactor(dispatcher_, access_, context);
  }

  grpc::ServerUnaryReactor* ListWorkers(grpc::CallbackServerContext* context,
                                        const v1::ListWorkersRequest* request,
                                        v1::ListWorkersResponse* response) override {
    grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
    grpc::Status status = Authorize(context, access_, Role::kClient);
    if (status.ok()) {
      for (const dispatch::WorkerSnapshot& worker : dispatcher_.ListWorkers()) {
        v1::WorkerStatus* out = response->add_workers();
        *out->mutable_hello() = worker.hello;
        out->set_peer(worker.peer);
        out->set_connected_unix_ms(worker.connected_unix_ms);
        out->set_last_seen_unix_ms(worker.last_seen_unix_ms);
        for (const std::string& id : worker.running_job_ids) out->add_running_job_ids(id);
        out->set_jobs_assigned(uint64_t(worker.jobs_assigned));
        out->set_results(uint64_t(worker.results));
        out->set_leases_lost(uint64_t(worker.leases_lost));
        out->set_draining(worker.draining);
        out->set_calibration_baseline_seconds(worker.calibration_baseline_seconds);
        out->set_calibration_last_seconds(worker.calibration_last_seconds);
        out->set_drift_events(uint64_t(worker.drift_events));
        out->set_last_drift(worker.last_drift);
        out->set_calibration_jitter(worker.calibration_jitter);
      }
      dispatch::DispatcherStats stats = dispatcher_.Stats();
      response->set_queued_jobs(uint64_t(stats.queued));
      response->set_leased_jobs(uint64_t(stats.leased));
    }
    reactor->Finish(status);
    return reactor;
  }

 private:
  dispatch::Dispatcher& dispatcher_;
  const AccessPolicy access_;
};

}  // namespace

std::unique_ptr<grpc::Service> MakeWorkerService(dispatch::Dispatcher& dispatcher,
                                                 AccessPolicy access) {
  return std::make_unique<WorkerServiceImpl>(dispatcher, std::move(access));
}

}  // namespace tuned::server

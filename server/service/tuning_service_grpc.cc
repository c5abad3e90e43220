// TuningService over the task manager: unary calls finish inline (the task manager's calls are
// short database reads and writes); WatchTask is a write reactor fed by a task watcher.

#include <deque>
#include <mutex>
#include <optional>

#include "proto/task_state.h"
#include "server/service/grpc_util.h"
#include "server/service/request_checks.h"
#include "server/tasks/task_manager.h"
#include "tuned/v1/tuning_service.grpc.pb.h"

namespace tuned::server {
namespace {

grpc::Status CheckTaskIdField(const std::string& task_id) {
  return rpc::ToGrpcStatus(CheckTaskId(task_id));
}

/// Streams a task's status after every change, then finishes once a final state was written.
/// Only the newest pending status is kept while a write is in flight (a slow client sees fewer
/// updates, never a growing queue).
class WatchReactor : public grpc::ServerWriteReactor<v1::TaskStatus> {
 public:
  WatchReactor(tasks::TaskManager& tasks, const AccessPolicy& access,
               grpc::CallbackServerContext* context, const v1::WatchTaskRequest& request)
      : tasks_(tasks) {
    grpc::Status status = Authorize(context, access, Role::kClient);
    if (status.ok()) status = CheckTaskIdField(request.task_id());
    if (!status.ok()) {
      Finish(status);
      return;
    }
    auto id = tasks_.AddWatcher(request.task_id(), [this](const v1::TaskStatus& s) { Enqueue(s); });
    if (!id.ok()) {
      Finish(rpc::ToGrpcStatus(id.status()));
      return;
    }
    std::lock_guard<std::mutex> lock(mu_);
    watcher_id_ = *id;
    started_ = true;
    WriteNextLocked();
  }

  void OnWriteDone(bool ok) override {
    std::lock_guard<std::mutex> lock(mu_);
    writing_ = false;
    if (!ok) {
      FinishLocked(grpc::Status(grpc::StatusCode::CANCELLED, "watch stream broken"));
      return;
    }
    if (v1::IsFinal(current_.state())) {
      FinishLocked(grpc::Status::OK);
      return;
    }
    WriteNextLocked();
  }

  void OnCancel() override {
    std::lock_guard<std::mutex> lock(mu_);
    FinishLocked(grpc::Status(grpc::StatusCode::CANCELLED, "watch cancelled"));
  }

  void OnDone() override {
    // After RemoveWatcher returns, no Publish is calling Enqueue any more.
    if (watcher_id_ != 0) tasks_.RemoveWatcher(watcher_id_);
    delete this;
  }

 private:
  void Enqueue(const v1::TaskStatus& status) {
    std::lock_guard<std::mutex> lock(mu_);
    if (finished_) return;
    pending_ = status;
    if (started_ && !writing_) WriteNextLocked();
  }

  void WriteNextLocked() {
    if (finished_ || writing_ || !pending_) return;
    current_ = std::move(*pending_);
    pending_.reset();
    writing_ = true;
    StartWrite(&current_);
  }

  void FinishLocked(const grpc::Status& status) {
    if (finished_) return;
    finished_ = true;
    Finish(status);
  }

  tasks::TaskManager& tasks_;
  std::mutex mu_;
  uint64_t watcher_id_ = 0;
  bool started_ = false;
  bool writing_ = false;
  bool finished_ = false;
  std::optional<v1::TaskStatus> pending_;
  v1::TaskStatus current_;
};

class TuningServiceImpl final : public v1::TuningService::CallbackService {
 public:
  TuningServiceImpl(tasks::TaskManager& tasks, AccessPolicy access)
      : tasks_(tasks), access_(std::move(access)) {}

  grpc::ServerUnaryReactor* SubmitTask(grpc::CallbackServerContext* context,
                                       const v1::SubmitTaskRequest* request,
                                       v1::SubmitTaskResponse* response) override {
    return Unary(context, [&]() -> grpc::Status {
      if (!request->has_spec()) {
        return {grpc::StatusCode::INVALID_ARGUMENT, "submit task: missing spec"};
      }
      auto status = tasks_.Submit(request->spec());
      if (!status.ok()) return rpc::ToGrpcStatus(status.status());
      *response->mutable_status() = std::move(*status);
      return grpc::Status::OK;
    });
  }

  grpc::ServerUnaryReactor* GetTask(grpc::CallbackServerContext* context,
                                    const v1::GetTaskRequest* request,
                                    v1::TaskStatus* response) override {
    return Unary(context, [&]() -> grpc::Status {
      if (grpc::Status s = CheckTaskIdField(request->task_id()); !s.ok()) return s;
      auto status = tasks_.Get(request->task_id());
      if (!status.ok()) return rpc::ToGrpcStatus(status.status());
      *response = std::move(*status);
      return grpc::Status::OK;
    });
  }

  grpc::ServerUnaryReactor* ListTasks(grpc::CallbackServerContext* context,
                                      const v1::ListTasksRequest* request,
                                      v1::ListTasksResponse* response) override {
    return Unary(context, [&]() -> grpc::Status {
      if (!v1::TaskState_IsValid(request->state())) {
        return {grpc::StatusCode::INVALID_ARGUMENT, "list tasks: unknown state"};
      }
      std::optional<v1::TaskState> state;
      if (request->state() != v1::TASK_STATE_UNSPECIFIED) state = request->state();
      auto tasks = tasks_.List(state);
      if (!tasks.ok()) return rpc::ToGrpcStatus(tasks.status());
      for (v1::TaskStatus& task : *tasks) *response->add_tasks() = std::move(task);
      return grpc::Status::OK;
    });
  }

  grpc::ServerWriteReactor<v1::TaskStatus>* WatchTask(
      grpc::CallbackServerContext* context, const v1::WatchTaskRequest* request) override {
    return new WatchReactor(tasks_, access_, context, *request);
  }

  grpc::ServerUnaryReactor* CancelTask(grpc::CallbackServerContext* context,
                                       const v1::CancelTaskRequest* request,
                                       v1::TaskStatus* response) override {
    return Unary(context, Role::kAdmin, [&]() -> grpc::Status {
      if (grpc::Status s = CheckTaskIdField(request->task_id()); !s.ok()) return s;
      auto status = tasks_.Cancel(request->task_id());
      if (!status.ok()) return rpc::ToGrpcStatus(status.status());
      *response = std::move(*status);
      return grpc::Status::OK;
    });
  }

 private:
  template <typename Body>
  grpc::ServerUnaryReactor* Unary(grpc::CallbackServerContext* context, Body body) {
    return Unary(context, Role::kClient, std::move(body));
  }
  template <typename Body>
  grpc::ServerUnaryReactor* Unary(grpc::CallbackServerContext* context, Role role, Body body) {
    grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
    grpc::Status status = Authorize(context, access_, role);
    reactor->Finish(status.ok() ? body() : status);
    return reactor;
  }

  tasks::TaskManager& tasks_;
  const AccessPolicy access_;
};

}  // namespace

std::unique_ptr<grpc::Service> MakeTuningService(tasks::TaskManager& tasks, AccessPolicy access) {
  return std::make_unique<TuningServiceImpl>(tasks, std::move(access));
}

}  // namespace tuned::server

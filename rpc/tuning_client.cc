#include "rpc/tuning_client.h"

#include <grpcpp/grpcpp.h>

#include <chrono>

#include "rpc/auth.h"
#include "rpc/grpc_status.h"
#include "rpc/unary_call_internal.h"
#include "tuned/v1/tuning_service.grpc.pb.h"

namespace tuned::rpc {

struct TuningClient::Stub {
  std::unique_ptr<v1::TuningService::Stub> stub;
};

TuningClient::TuningClient(Connection connection)
    : connection_(std::move(connection)),
      stub_(new Stub{v1::TuningService::NewStub(connection_.channel)}) {}

TuningClient::~TuningClient() = default;

StatusOr<v1::TaskStatus> TuningClient::Submit(const v1::TaskSpec& spec, int timeout_ms) {
  v1::SubmitTaskRequest request;
  *request.mutable_spec() = spec;
  // A server that is (re)starting is waited for rather than failed at once.
  TUNED_ASSIGN_OR_RETURN(
      v1::SubmitTaskResponse response,
      UnaryCall<v1::SubmitTaskResponse>(*stub_->stub, &v1::TuningService::Stub::SubmitTask,
                                        request, connection_, timeout_ms, "submitting the task",
                                        /*wait_for_ready=*/true));
  return response.status();
}

StatusOr<v1::TaskStatus> TuningClient::Get(const std::string& task_id, int timeout_ms) {
  v1::GetTaskRequest request;
  request.set_task_id(task_id);
  return UnaryCall<v1::TaskStatus>(*stub_->stub, &v1::TuningService::Stub::GetTask, request,
                                   connection_, timeout_ms, "reading task " + task_id);
}

Status TuningClient::Watch(const std::string& task_id,
                           const std::function<void(const v1::TaskStatus&)>& on_update) {
  grpc::ClientContext context;
  // A task may run for days; the stream ends with the task, or when the server goes away.
  AddToken(context, connection_.token);
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::hours(24 * 7));
  v1::WatchTaskRequest request;
  request.set_task_id(task_id);
  auto reader = stub_->stub->WatchTask(&context, request);
  v1::TaskStatus update;
  while (reader->Read(&update)) on_update(update);
  return FromGrpcStatus(reader->Finish(), "watching task " + task_id);
}

}  // namespace tuned::rpc

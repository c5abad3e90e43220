#include "worker/client/remote_record_source.h"

#include <chrono>
#include <set>

#include <grpcpp/grpcpp.h>

#include "tuned/v1/database_service.grpc.pb.h"

namespace tuned::worker {
namespace {

class RemoteRecordSource : public reuse::RecordSource {
 public:
  explicit RemoteRecordSource(const RemoteRecordOptions& options)
      : options_(options), stub_(v1::DatabaseService::NewStub(CreateClientChannel(options.channel))) {}

  StatusOr<db::BestRecords> Best(const std::string& workload_key, const std::string& target,
                                 int limit) override {
    v1::BestRecordsRequest request;
    request.set_workload_key(workload_key);
    request.set_target(target);
    request.set_limit(uint32_t(limit));
    v1::BestRecordsResponse response;
    grpc::ClientContext context;
    Prepare(context);
    TUNED_RETURN_IF_ERROR(FromGrpcStatus(stub_->BestRecords(&context, request, &response),
                                         "best records from " + options_.channel.address));
    db::BestRecords best;
    best.records.assign(response.records().begin(), response.records().end());
    best.miss_reason = response.miss_reason();
    return best;
  }

  StatusOr<std::vector<std::string>> Targets(const std::string& workload_key) override {
    v1::ListRecordsRequest request;
    request.set_workload_key(workload_key);
    request.set_limit(1000);
    v1::ListRecordsResponse response;
    grpc::ClientContext context;
    Prepare(context);
    TUNED_RETURN_IF_ERROR(FromGrpcStatus(stub_->ListRecords(&context, request, &response),
                                         "records from " + options_.channel.address));
    std::set<std::string> targets;
    for (const v1::TuningRecord& record : response.records()) targets.insert(record.target().target());
    return std::vector<std::string>(targets.begin(), targets.end());
  }

 private:
  void Prepare(grpc::ClientContext& context) const {
    AddToken(context, options_.token);
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(options_.deadline_ms));
  }

  RemoteRecordOptions options_;
  std::unique_ptr<v1::DatabaseService::Stub> stub_;
};

}  // namespace

std::unique_ptr<reuse::RecordSource> ConnectRemoteRecordSource(const RemoteRecordOptions& options) {
  return std::make_unique<RemoteRecordSource>(options);
}

}  // namespace tuned::worker

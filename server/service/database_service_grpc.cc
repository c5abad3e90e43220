// DatabaseService over the tuning database: how a compiler on another machine reads the log.
// Every call is a bounded read (limits below; a workload's targets are few), answered inline.

#include "server/service/grpc_util.h"
#include "server/service/request_checks.h"
#include "tuned/v1/database_service.grpc.pb.h"
#include "tuning_db/record_store.h"

namespace tuned::server {
namespace {

class DatabaseServiceImpl final : public v1::DatabaseService::CallbackService {
 public:
  DatabaseServiceImpl(db::RecordStore& database, AccessPolicy access)
      : database_(database), access_(std::move(access)) {}

  grpc::ServerUnaryReactor* BestRecords(grpc::CallbackServerContext* context,
                                        const v1::BestRecordsRequest* request,
                                        v1::BestRecordsResponse* response) override {
    return Unary(context, [&]() -> Status {
      TUNED_RETURN_IF_ERROR(CheckBestRecordsRequest(*request));
      db::BestRecordsQuery query;
      query.workload_key = request->workload_key();
      query.target = request->target();
      query.limit = request->limit() == 0 ? 1 : int(request->limit());
      query.device_model = request->device_model();
      query.toolkit_version = request->toolkit_version();
      query.codegen_version = request->codegen_version();
      query.protocol_version = request->protocol_version();
      TUNED_ASSIGN_OR_RETURN(db::BestRecords best, database_.GetBestRecords(query));
      for (v1::TuningRecord& record : best.records) *response->add_records() = std::move(record);
      response->set_miss_reason(best.miss_reason);
      response->set_trials(uint64_t(best.trials));
      return Status::Ok();
    });
  }

  grpc::ServerUnaryReactor* ListRecords(grpc::CallbackServerContext* context,
                                        const v1::ListRecordsRequest* request,
                                        v1::ListRecordsResponse* response) override {
    return Unary(context, [&]() -> Status {
      TUNED_RETURN_IF_ERROR(CheckListRecordsRequest(*request));
      const uint32_t limit = request->limit() == 0 ? kDefaultListedRecords : request->limit();
      db::RecordFilter filter;
      filter.workload_key = request->workload_key();
      filter.task_id = request->task_id();
      filter.limit = int(request->offset() + limit);
      TUNED_ASSIGN_OR_RETURN(std::vector<v1::TuningRecord> records, database_.ListRecords(filter));
      for (size_t i = request->offset(); i < records.size(); ++i) {
        *response->add_records() = std::move(records[i]);
      }
      return Status::Ok();
    });
  }

  grpc::ServerUnaryReactor* ListTargets(grpc::CallbackServerContext* context,
                                        const v1::ListTargetsRequest* request,
                                        v1::ListTargetsResponse* response) override {
    return Unary(context, [&]() -> Status {
      TUNED_ASSIGN_OR_RETURN(std::vector<std::string> targets,
                             database_.ListTargets(request->workload_key()));
      for (std::string& target : targets) response->add_targets(std::move(target));
      return Status::Ok();
    });
  }

 private:
  template <typename Body>
  grpc::ServerUnaryReactor* Unary(grpc::CallbackServerContext* context, Body body) {
    grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
    grpc::Status status = Authorize(context, access_, Role::kClient);
    reactor->Finish(status.ok() ? rpc::ToGrpcStatus(body()) : status);
    return reactor;
  }

  db::RecordStore& database_;
  const AccessPolicy access_;
};

}  // namespace

std::unique_ptr<grpc::Service> MakeDatabaseService(db::RecordStore& database, AccessPolicy access) {
  return std::make_unique<DatabaseServiceImpl>(database, std::move(access));
}

}  // namespace tuned::server

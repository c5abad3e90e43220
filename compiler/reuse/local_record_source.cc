#include "common/version.h"
#include "compiler/reuse/record_source.h"

namespace tuned::reuse {
namespace {

class LocalRecordSource : public RecordSource {
 public:
  explicit LocalRecordSource(std::unique_ptr<db::Database> db) : db_(std::move(db)) {}

  StatusOr<db::BestRecords> Best(const std::string& workload_key, const std::string& target,
                                 int limit, const std::string& toolkit_version, uint32_t codegen_version,
                                 uint32_t protocol_version) override {
    db::BestRecordsQuery query;
    query.workload_key = workload_key;
    query.target = target;
    query.limit = limit;
    query.codegen_version = codegen_version;
    query.toolkit_version = toolkit_version;
    query.protocol_version = protocol_version;
    return db_->GetBestRecords(query);
  }

  StatusOr<std::vector<std::string>> Targets(const std::string& workload_key) override {
    return db_->ListTargets(workload_key);
  }

 private:
  std::unique_ptr<db::Database> db_;
};

}  // namespace

StatusOr<std::unique_ptr<RecordSource>> OpenLocalRecordSource(const std::string& db_path) {
  db::OpenOptions options;
  options.create_if_missing = false;
  TUNED_ASSIGN_OR_RETURN(auto db, db::OpenDatabase(db_path, options));
  return std::unique_ptr<RecordSource>(new LocalRecordSource(std::move(db)));
}

}  // namespace tuned::reuse

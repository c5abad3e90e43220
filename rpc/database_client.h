#ifndef TUNED_RPC_DATABASE_CLIENT_H_
#define TUNED_RPC_DATABASE_CLIENT_H_

/// \file
/// A client of DatabaseService (tuned/v1/database_service.proto): a server's tuning log, read
/// from another machine.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "rpc/channel.h"
#include "tuned/v1/database_service.pb.h"

namespace tuned::rpc {

class DatabaseClient {
 public:
  explicit DatabaseClient(Connection connection, int deadline_ms = kDefaultCallDeadlineMs);
  ~DatabaseClient();
  DatabaseClient(const DatabaseClient&) = delete;
  DatabaseClient& operator=(const DatabaseClient&) = delete;

  /// BestRecords: the best `limit` OK records of a workload on a target (of that code-generation
  /// version, 0: any; of that toolkit or an unknown one, "": any; of that timing protocol, 0:
  /// any), or why there are none.
  StatusOr<v1::BestRecordsResponse> BestRecords(const std::string& workload_key,
                                                const std::string& target, uint32_t limit,
                                                uint32_t codegen_version = 0,
                                                const std::string& toolkit_version = "",
                                                uint32_t protocol_version = 0);
  /// ListRecords: one page of records.
  StatusOr<v1::ListRecordsResponse> ListRecords(const v1::ListRecordsRequest& request);
  /// ListTargets: every target that has records of `workload_key` (of any workload when empty).
  StatusOr<std::vector<std::string>> ListTargets(const std::string& workload_key);

 private:
  struct Stub;
  const Connection connection_;
  const int deadline_ms_;
  std::unique_ptr<Stub> stub_;
};

}  // namespace tuned::rpc

#endif  // TUNED_RPC_DATABASE_CLIENT_H_

#ifndef TUNED_RPC_TUNING_CLIENT_H_
#define TUNED_RPC_TUNING_CLIENT_H_

/// \file
/// A client of TuningService (tuned/v1/tuning_service.proto): submit a task, read it, follow
/// its progress. Errors are Status with the server's canonical code.

#include <functional>
#include <memory>
#include <string>

#include "common/status.h"
#include "rpc/channel.h"
#include "tuned/v1/task.pb.h"

namespace tuned::rpc {

class TuningClient {
 public:
  explicit TuningClient(Connection connection);
  ~TuningClient();
  TuningClient(const TuningClient&) = delete;
  TuningClient& operator=(const TuningClient&) = delete;

  /// SubmitTask. Waits up to `timeout_ms` for the server to become reachable and answer;
  /// DeadlineExceeded after that.
  StatusOr<v1::TaskStatus> Submit(const v1::TaskSpec& spec, int timeout_ms);
  /// GetTask.
  StatusOr<v1::TaskStatus> Get(const std::string& task_id,
                               int timeout_ms = kDefaultCallDeadlineMs);
  /// WatchTask: calls `on_update` with every status the server sends, in order, until the
  /// stream ends. OK when the server ended it (it does after a final state), else the error
  /// (Unavailable when the server went away).
  Status Watch(const std::string& task_id,
               const std::function<void(const v1::TaskStatus&)>& on_update);

 private:
  struct Stub;
  const Connection connection_;
  std::unique_ptr<Stub> stub_;
};

}  // namespace tuned::rpc

#endif  // TUNED_RPC_TUNING_CLIENT_H_

#ifndef TUNED_WORKER_CLIENT_REMOTE_RECORD_SOURCE_H_
#define TUNED_WORKER_CLIENT_REMOTE_RECORD_SOURCE_H_

/// \file
/// The tuning log of a server, read through its DatabaseService: how a compiler on another
/// machine applies the best records (reuse::RecordSource over gRPC).

#include <memory>
#include <string>

#include "compiler/reuse/record_source.h"
#include "worker/client/channel.h"

namespace tuned::worker {

struct RemoteRecordOptions {
  ChannelOptions channel;
  std::string token;
  int deadline_ms = 10000;  // per call
};

std::unique_ptr<reuse::RecordSource> ConnectRemoteRecordSource(const RemoteRecordOptions& options);

}  // namespace tuned::worker

#endif  // TUNED_WORKER_CLIENT_REMOTE_RECORD_SOURCE_H_

#ifndef TUNED_COMPILER_REUSE_REMOTE_REMOTE_RECORD_SOURCE_H_
#define TUNED_COMPILER_REUSE_REMOTE_REMOTE_RECORD_SOURCE_H_

/// \file
/// The tuning log of a server, read through its DatabaseService: how a compiler on another
/// machine applies the best records. Answers like the local source (record_source.h) does.

#include <memory>

#include "compiler/reuse/record_source.h"
#include "rpc/channel.h"

namespace tuned::reuse {

/// Calls are made lazily; each one has `deadline_ms`.
std::unique_ptr<RecordSource> OpenRemoteRecordSource(rpc::Connection connection,
                                                     int deadline_ms = rpc::kDefaultCallDeadlineMs);

}  // namespace tuned::reuse

#endif  // TUNED_COMPILER_REUSE_REMOTE_REMOTE_RECORD_SOURCE_H_

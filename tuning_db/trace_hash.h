#ifndef TUNED_TUNING_DB_TRACE_HASH_H_
#define TUNED_TUNING_DB_TRACE_HASH_H_

/// \file
/// The identity of a trace for deduplication: the search asks "was this trace measured for this
/// workload and target?" by this hash before sending a candidate to a worker.

#include <string>

#include "tuned/v1/trace.pb.h"

namespace tuned::db {

/// SHA-256 (64 lower-case hex digits) of the deterministic protobuf serialization of the
/// trace's instructions and decisions. The format `version` is not hashed, so re-stamping a
/// trace with a newer version keeps its identity; any change to an instruction or decision
/// changes the hash.
std::string TraceHash(const v1::Trace& trace);

}  // namespace tuned::db

#endif  // TUNED_TUNING_DB_TRACE_HASH_H_

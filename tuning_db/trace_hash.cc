#include "tuning_db/trace_hash.h"

#include "common/sha256.h"
#include "proto/deterministic_bytes.h"

namespace tuned::db {

std::string TraceHash(const v1::Trace& trace) {
  v1::Trace body;
  *body.mutable_instructions() = trace.instructions();
  *body.mutable_decisions() = trace.decisions();
  return Sha256Hex(v1::DeterministicBytes(body));
}

}  // namespace tuned::db

#include "tuning_db/trace_hash.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include "common/sha256.h"

namespace tuned::db {

std::string TraceHash(const v1::Trace& trace) {
  v1::Trace body;
  *body.mutable_instructions() = trace.instructions();
  *body.mutable_decisions() = trace.decisions();
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream output(&bytes);
    google::protobuf::io::CodedOutputStream coded(&output);
    coded.SetSerializationDeterministic(true);
    body.SerializeToCodedStream(&coded);
  }
  return Sha256Hex(bytes);
}

}  // namespace tuned::db

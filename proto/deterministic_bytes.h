#ifndef TUNED_PROTO_DETERMINISTIC_BYTES_H_
#define TUNED_PROTO_DETERMINISTIC_BYTES_H_

/// \file
/// A message's deterministic serialization (map entries in key order), the bytes that identify
/// it in hashes: a trace's hash in the tuning log, a build's key in the worker's object cache.

#include <string>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/message_lite.h>

namespace tuned::v1 {

inline std::string DeterministicBytes(const google::protobuf::MessageLite& message) {
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream output(&bytes);
    google::protobuf::io::CodedOutputStream coded(&output);
    coded.SetSerializationDeterministic(true);
    message.SerializeToCodedStream(&coded);
  }
  return bytes;
}

}  // namespace tuned::v1

#endif  // TUNED_PROTO_DETERMINISTIC_BYTES_H_

#ifndef TUNED_PROTO_MEASURE_CONFIG_H_
#define TUNED_PROTO_MEASURE_CONFIG_H_

/// \file
/// How an incomplete `MeasureConfig` (tuned/v1/measure.proto) is completed: field by field,
/// every field the request leaves absent takes the default's value and every present one is
/// kept, whatever its value. The worker (its protocol defaults) and the server (its default
/// protocol for tasks) complete configs with this one function.

#include "tuned/v1/measure.pb.h"

namespace tuned::v1 {

/// The version of the CPU timing protocol this build's worker runs (worker/timing_protocol.h
/// describes it) and the compiler prefers records of: a newer protocol times differently, so
/// records of two versions are not ranked together.
inline constexpr uint32_t kMeasureProtocolVersion = 2;

/// `requested` with each absent field taken from `defaults` (every field has explicit
/// presence, so MergeFrom copies exactly the present ones, zeros and false included).
inline MeasureConfig WithMeasureDefaults(const MeasureConfig& requested,
                                         const MeasureConfig& defaults) {
  MeasureConfig config = defaults;
  config.MergeFrom(requested);
  return config;
}

/// Whether a record measured with `config` had its output checked: only an explicit
/// `verify: false` turns verification off.
inline bool IsVerified(const MeasureConfig& config) {
  return !config.has_verify() || config.verify();
}

/// The timing protocol's version a record was measured with (1 where the config predates the
/// field): part of a record's key.
inline uint32_t ProtocolVersion(const MeasureConfig& config) {
  return config.has_protocol_version() ? config.protocol_version() : 1;
}

}  // namespace tuned::v1

#endif  // TUNED_PROTO_MEASURE_CONFIG_H_

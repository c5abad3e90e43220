#ifndef TUNED_COMMON_TIME_H_
#define TUNED_COMMON_TIME_H_

/// \file
/// Wall-clock time as stored in records, tasks and worker sessions, and durations as every
/// command prints them.

#include <cstdint>
#include <string>

namespace tuned {

/// Milliseconds since the Unix epoch (system clock).
int64_t UnixMs();

/// A duration for people: "12.34 us", "5.678 ms", "1.234 s"; "-" when not positive (no
/// measurement).
std::string FormatSeconds(double seconds);

}  // namespace tuned

#endif  // TUNED_COMMON_TIME_H_

#ifndef TUNED_TESTS_FUZZ_FUZZ_CHECK_H_
#define TUNED_TESTS_FUZZ_FUZZ_CHECK_H_

/// \file
/// What a fuzz target does when a property it checks fails: print why and abort, so libFuzzer
/// keeps the input as a crash. (Errors on bad input are not failures; broken promises on
/// accepted input are.)

#include <cstdio>
#include <cstdlib>
#include <string>

#include <google/protobuf/stubs/logging.h>

namespace tuned::fuzz {

[[noreturn]] inline void Fail(const std::string& what) {
  std::fprintf(stderr, "fuzz property failed: %s\n", what.c_str());
  std::abort();
}

inline void Check(bool ok, const std::string& what) {
  if (!ok) Fail(what);
}

// Fuzzed bytes are mostly not valid messages; protobuf's line per refused string (invalid UTF-8)
// would cost more than the input's own work and fill the run's log.
inline void QuietProtobufLog() { google::protobuf::SetLogHandler(nullptr); }

}  // namespace tuned::fuzz

#endif  // TUNED_TESTS_FUZZ_FUZZ_CHECK_H_

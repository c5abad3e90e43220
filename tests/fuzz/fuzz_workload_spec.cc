// Workload specs ("matmul(M=64,N=64,K=64)", and definition keys "tdl: ..."): what clients send
// in a task and what the log stores as a workload key. An accepted spec must round-trip: its
// canonical key parses to a workload with the same key and definition.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "compiler/ir/op_library.h"
#include "fuzz_check.h"

using namespace tuned;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view spec(reinterpret_cast<const char*>(data), size);
  ir::SpecLimits limits;
  limits.max_buffer_bytes = int64_t(1) << 24;  // keeps accepted workloads small enough to build
  StatusOr<ir::Workload> workload = ir::ParseWorkloadSpec(spec, limits);
  if (!workload.ok()) {
    fuzz::Check(!workload.status().message().empty(), "a refused spec has no error message");
    return 0;
  }
  StatusOr<ir::Workload> again = ir::ParseWorkloadSpec(workload->key(), limits);
  fuzz::Check(again.ok(), "the key of an accepted spec is refused: " + workload->key() + ": " +
                              (again.ok() ? "" : again.status().message()));
  fuzz::Check(again->key() == workload->key(), "the key does not round-trip: " + workload->key());
  fuzz::Check(again->Definition() == workload->Definition(),
              "the key parses to another definition: " + workload->key());
  return 0;
}

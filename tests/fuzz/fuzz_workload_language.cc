// The workload definition language (`--workload-file`): user-written text. An accepted
// definition must print to a canonical text that parses to the same key, and its key must
// rebuild the same workload.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "compiler/ir/tdl/definition.h"
#include "fuzz_check.h"

using namespace tuned;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  ir::DefinitionOptions options;
  options.limits.max_buffer_bytes = int64_t(1) << 24;
  StatusOr<ir::Workload> workload = ir::ParseDefinition(text, options);
  if (!workload.ok()) {
    fuzz::Check(!workload.status().message().empty(), "a refused definition has no message");
    return 0;
  }
  const std::string printed = ir::PrintDefinition(*workload);
  StatusOr<ir::Workload> reparsed = ir::ParseDefinition(printed, options);
  fuzz::Check(reparsed.ok(), "the printed definition is refused:\n" + printed + "\n" +
                                 (reparsed.ok() ? "" : reparsed.status().message()));
  fuzz::Check(reparsed->key() == workload->key(), "printing changes the key: " + workload->key());
  StatusOr<ir::Workload> from_key = ir::ParseWorkloadSpec(workload->key(), options.limits);
  fuzz::Check(from_key.ok() && from_key->key() == workload->key(),
              "the key does not rebuild the workload: " + workload->key());
  return 0;
}

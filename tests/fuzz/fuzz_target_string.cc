// Target strings ("llvm -mcpu=znver3", "cuda -arch=sm_90", "opencl"): given by clients and
// workers. An accepted target's canonical text must parse to the same target.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_check.h"
#include "target/target.h"

using namespace tuned;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  StatusOr<target::Target> parsed = target::ParseTarget(text);
  if (!parsed.ok()) return 0;
  const std::string canonical = parsed->ToString();
  StatusOr<target::Target> again = target::ParseTarget(canonical);
  fuzz::Check(again.ok(), "the canonical text of an accepted target is refused: " + canonical);
  fuzz::Check(again->ToString() == canonical, "the canonical text does not round-trip: " + canonical);
  return 0;
}

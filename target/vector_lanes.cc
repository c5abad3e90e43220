#include <string_view>

#include "target/target.h"

namespace tuned::target {
namespace {

// CPUs whose default features include AVX-512F (LLVM's names).
constexpr std::string_view kAvx512Cpus[] = {
    "cascadelake",    "cooperlake", "icelake-client", "icelake-server", "sapphirerapids",
    "skylake-avx512", "tigerlake",  "znver4",
};

bool IsAvx512Cpu(std::string_view cpu) {
  for (std::string_view known : kAvx512Cpus) {
    if (cpu == known) return true;
  }
  return false;
}

// Every AVX-512 extension (avx512bw, avx512fp16, ...) implies AVX-512F, so switching one on
// gives 512-bit registers.
bool EnablesAvx512(const std::vector<std::string>& features) {
  for (const std::string& f : features) {
    if (std::string_view(f).starts_with("+avx512")) return true;
  }
  return false;
}

}  // namespace

int Target::Fp32VectorLanes() const {
  if (kind == TargetKind::kCuda || kind == TargetKind::kOpencl) return 1;
  // Switching AVX-512F off removes every AVX-512 extension with it.
  if (HasFeature("-avx512f")) return 8;
  if (EnablesAvx512(features) || IsAvx512Cpu(cpu)) return 16;
  return 8;
}

int Target::VectorRegisters() const {
  if (kind == TargetKind::kCuda || kind == TargetKind::kOpencl) return 0;
  // AVX-512 doubles the register file along with the width.
  return Fp32VectorLanes() == 16 ? 32 : 16;
}

}  // namespace tuned::target

#include "target/cuda_arch.h"

namespace tuned::target {
namespace {

constexpr int kKiB = 1024;

// Per compute capability, from NVIDIA's table of technical specifications: every listed arch has
// 1024 threads per block, 32-thread warps and 48 KiB of statically allocated shared memory per
// block; the opt-in maximum (dynamic shared memory) differs.
constexpr CudaArchLimits kArchs[] = {
    {"sm_50", 1024, 48 * kKiB, 48 * kKiB, 32},  {"sm_52", 1024, 48 * kKiB, 48 * kKiB, 32},
    {"sm_53", 1024, 48 * kKiB, 48 * kKiB, 32},  {"sm_60", 1024, 48 * kKiB, 48 * kKiB, 32},
    {"sm_61", 1024, 48 * kKiB, 48 * kKiB, 32},  {"sm_62", 1024, 48 * kKiB, 48 * kKiB, 32},
    {"sm_70", 1024, 48 * kKiB, 96 * kKiB, 32},  {"sm_72", 1024, 48 * kKiB, 96 * kKiB, 32},
    {"sm_75", 1024, 48 * kKiB, 64 * kKiB, 32},  {"sm_80", 1024, 48 * kKiB, 163 * kKiB, 32},
    {"sm_86", 1024, 48 * kKiB, 99 * kKiB, 32},  {"sm_87", 1024, 48 * kKiB, 163 * kKiB, 32},
    {"sm_89", 1024, 48 * kKiB, 99 * kKiB, 32},  {"sm_90", 1024, 48 * kKiB, 227 * kKiB, 32},
    {"sm_100", 1024, 48 * kKiB, 227 * kKiB, 32}, {"sm_120", 1024, 48 * kKiB, 99 * kKiB, 32},
};

}  // namespace

std::optional<CudaArchLimits> FindCudaArch(std::string_view arch) {
  for (const CudaArchLimits& limits : kArchs) {
    if (limits.arch == arch) return limits;
  }
  return std::nullopt;
}

std::vector<std::string_view> KnownCudaArchs() {
  std::vector<std::string_view> out;
  for (const CudaArchLimits& limits : kArchs) out.push_back(limits.arch);
  return out;
}

}  // namespace tuned::target

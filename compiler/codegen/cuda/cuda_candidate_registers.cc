// CheckRegisterBudget (cuda_candidate.h): toolkit-free, so it is built and tested everywhere.

#include <cstdint>
#include <string>

#include "compiler/codegen/cuda/cuda_candidate.h"

namespace tuned::codegen::cuda {
namespace {

constexpr int64_t kWarpThreads = 32;
constexpr int64_t kWarpAllocationUnit = 256;  // registers are given to a warp in these units

}  // namespace

Status CheckRegisterBudget(const v1::GpuCandidateProgram& candidate) {
  for (const v1::GpuKernelLaunch& launch : candidate.launches()) {
    for (const v1::KernelResourceUsage& usage : candidate.kernels()) {
      if (usage.function() != launch.function()) continue;
      int64_t threads = 1;
      for (int64_t extent : launch.block()) threads *= extent;
      const int64_t warps = (threads + kWarpThreads - 1) / kWarpThreads;
      const int64_t per_warp =
          (int64_t(usage.registers()) * kWarpThreads + kWarpAllocationUnit - 1) / kWarpAllocationUnit * kWarpAllocationUnit;
      if (warps * per_warp > kRegistersPerBlock) {
        return ResourceExhaustedError("kernel '" + launch.function() + "' needs " + std::to_string(usage.registers()) +
                                      " registers per thread: a block of " + std::to_string(threads) + " threads needs " +
                                      std::to_string(warps * per_warp) + ", more than the " +
                                      std::to_string(kRegistersPerBlock) + " a block can hold");
      }
    }
  }
  return Status::Ok();
}

}  // namespace tuned::codegen::cuda

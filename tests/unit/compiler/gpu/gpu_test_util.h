#ifndef TUNED_TESTS_UNIT_COMPILER_GPU_GPU_TEST_UTIL_H_
#define TUNED_TESTS_UNIT_COMPILER_GPU_GPU_TEST_UTIL_H_

// Lowered GPU programs run for real: OpenCL C on the OpenCL device (PoCL here), CUDA C
// compiled by NVRTC. Each is present only when the build has the library; without it, the
// functions return Unavailable with the reason (tests then skip, saying so).

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "compiler/ir/workload.h"
#include "compiler/lower/gpu/gpu_program.h"

namespace tuned::testing {

/// The workload of a spec (the test fails on a bad one).
std::shared_ptr<const ir::Workload> Spec(const std::string& spec);

/// Interprets `program` (races checked) and expects the float64 reference of `w`.
void ExpectMatchesReference(const lower::gpu::GpuProgram& program, const ir::Workload& w);

/// The barriers in `s`.
int CountBarriers(const ir::Stmt& s);

/// Prints `program` as OpenCL C, builds it on the first OpenCL device, runs its kernels in
/// order with their launch configurations, and returns the output's values.
StatusOr<std::vector<double>> RunOnOpencl(const lower::gpu::GpuProgram& program,
                                          const std::map<std::string, std::vector<double>>& inputs);

/// Prints `program` as CUDA C and compiles it with NVRTC for `target_text` (e.g. "cuda
/// -arch=sm_90"); returns the registers and spill bytes of each kernel, "name: R registers, S
/// spill bytes" per line.
StatusOr<std::string> CompileWithNvrtc(const lower::gpu::GpuProgram& program,
                                       const std::string& target_text = "cuda -arch=sm_90");

}  // namespace tuned::testing

#endif  // TUNED_TESTS_UNIT_COMPILER_GPU_GPU_TEST_UTIL_H_

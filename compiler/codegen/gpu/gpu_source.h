#ifndef TUNED_COMPILER_CODEGEN_GPU_GPU_SOURCE_H_
#define TUNED_COMPILER_CODEGEN_GPU_GPU_SOURCE_H_

/// \file
/// The GPU source printer: a lowered GPU program (compiler/lower/gpu/gpu_program.h) as CUDA C
/// or OpenCL C, one function per kernel, in launch order. One printer, two dialects: they differ
/// only in the spellings of kernel, address spaces, thread indices, barrier and a few math
/// functions. The output is deterministic and meant to be read: one statement per line, loops
/// and branches as written in the program, flat row-major indices, names from the schedule
/// (dots become underscores).
///
/// CUDA C: `extern "C" __global__ void __launch_bounds__(threads) name(const float* __restrict__
/// A, ..., float* __restrict__ C)`, `__shared__` arrays at kernel scope, `__syncthreads()`.
/// OpenCL C: `__kernel __attribute__((reqd_work_group_size(x, y, z))) void name(__global const
/// float* restrict A, ...)`, `__local` arrays at kernel scope, `barrier(CLK_LOCAL_MEM_FENCE)`.
/// Parameters are the kernel's global buffers in program order (inputs, output, then the
/// intermediates it uses); the launch configuration is the kernel's grid and block.

#include <string>

#include "compiler/lower/gpu/gpu_program.h"
#include "compiler/lower/gpu/lower_gpu.h"
#include "target/target.h"

namespace tuned::codegen::gpu {

enum class Dialect { kCuda, kOpencl };

/// The source of every kernel of `program`.
std::string PrintGpuSource(const lower::gpu::GpuProgram& program, Dialect dialect);

/// The C name of `kernel`'s function in the printed source (its name, made a safe identifier).
std::string KernelFunctionName(const lower::gpu::GpuKernel& kernel);

/// The dialect of a cuda or opencl target.
Dialect DialectOf(const target::Target& target);

/// The limits GPU lowering checks for `target` (a cuda or opencl target); limits an opencl
/// target leaves to its device are not checked here (the runner checks them at launch).
lower::gpu::GpuLimits LimitsOf(const target::Target& target);

}  // namespace tuned::codegen::gpu

#endif  // TUNED_COMPILER_CODEGEN_GPU_GPU_SOURCE_H_

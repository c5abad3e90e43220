#ifndef TUNED_TARGET_TARGET_H_
#define TUNED_TARGET_TARGET_H_

/// \file
/// What a candidate is compiled for: one typed `Target`, parsed and validated once from its
/// text form, which is part of every tuning record's key and must stay byte-stable.
///
/// LLVM CPU targets:
///
///   llvm [-mtriple=TRIPLE] [-mcpu=CPU] [-mattr=+f1,-f2,...] [-num-cores=N]
///
/// - `-mtriple`: no triple means the triple of the process that compiles (the host). The
///   canonical form has none when it is that triple (LLVM's normalisation decides, in codegen).
/// - `-mcpu` defaults to `generic`.
/// - `-mattr` lists features that differ from the CPU's defaults (`+` on, `-` off), sorted by
///   name, one per name (the last one given wins). Dropping features that equal the CPU's
///   defaults needs LLVM's tables: codegen's `ValidateLlvmCpuTarget` does it.
/// - `-num-cores` (default 1, at most 4096) is the number of threads parallel loops use; it is
///   always printed.
///
/// CUDA targets (GPU lowering prints CUDA C for them, compiler/codegen/gpu; NVRTC builds it,
/// compiler/codegen/cuda):
///
///   cuda -arch=sm_XX [-max-threads-per-block=N] [-max-shared-memory-per-block=BYTES]
///        [-warp-size=32]
///
/// - `-arch` is required and must be a known architecture (see cuda_arch.h for the defaults of
///   the other attributes and their limits); the canonical form prints every attribute.
///
/// OpenCL targets:
///
///   opencl [-device=NAME] [-max-work-group-size=N] [-local-memory-bytes=BYTES]
///          [-sub-group-size=N]
///
/// - Without `-device`, the first device of the first platform; a name with spaces is written
///   in double quotes (`-device="pthread-haswell-AMD EPYC"`) and printed so.
/// - The limits are what code for the target may use. An option left out (0 in
///   `OpenclAttributes`) means "the device's own", which only the OpenCL runtime can tell:
///   `opencl::ResolveTarget` (compiler/runtime/opencl) fills them in from the device and refuses
///   a limit the device does not have. The canonical form prints the options that are set.
///
/// Options may come in any order; the canonical text orders them as above. Errors are one line
/// naming the text and the offending option, e.g. "target 'llvm -num-cores=0': -num-cores: '0'
/// is not a positive integer".

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace tuned::target {

enum class TargetKind {
  kLlvmCpu,  // text form starts with "llvm"
  kCuda,     // text form starts with "cuda"
  kOpencl,   // text form starts with "opencl"
};

/// The word the text form starts with: "llvm", "cuda" or "opencl".
std::string_view KindName(TargetKind kind);

/// GPU attributes of a CUDA target.
struct CudaAttributes {
  std::string arch;                          // e.g. "sm_90"
  int max_threads_per_block = 1024;
  int max_shared_memory_per_block = 49152;   // bytes a block may use
  int warp_size = 32;
  bool operator==(const CudaAttributes&) const = default;
};

/// Attributes of an OpenCL target; 0 or empty: the device's own (see the file comment).
struct OpenclAttributes {
  std::string device;                // device name; empty: first device of the first platform
  int max_work_group_size = 0;       // work-items per work-group
  int local_memory_bytes = 0;        // __local bytes a work-group may use
  int sub_group_size = 0;            // work-items that run in lockstep (a warp's width)
  bool operator==(const OpenclAttributes&) const = default;
};

struct Target {
  TargetKind kind = TargetKind::kLlvmCpu;

  // LLVM CPU attributes (kLlvmCpu).
  std::string triple;                 // e.g. "aarch64-unknown-linux-gnu"; empty: the host's
  std::string cpu = "generic";        // e.g. "znver3"
  std::vector<std::string> features;  // "+avx2" / "-fma", sorted by name, one per name
  int num_cores = 1;                  // threads of parallel loops

  // CUDA attributes (kCuda).
  CudaAttributes cuda;

  // OpenCL attributes (kOpencl).
  OpenclAttributes opencl;

  /// The canonical text form (see the file comment).
  std::string ToString() const;
  /// `features` joined with commas, as LLVM takes them.
  std::string FeatureString() const;
  /// Whether `features` holds exactly `token`: "+avx512f" does not match "+avx512fp16".
  bool HasFeature(std::string_view token) const;
  /// fp32 lanes of the widest vector unit code for this target may use: 16 with AVX-512, else 8
  /// on a CPU (see vector_lanes.cc for how it is derived); 1 for a CUDA thread or OpenCL work-item.
  int Fp32VectorLanes() const;
  /// Vector registers of a CPU target's widest vector unit, which a register tile's
  /// accumulators and operands share: 32 with AVX-512, else 16 (AVX2's and SSE's); 0 for a GPU.
  int VectorRegisters() const;

  bool operator==(const Target&) const = default;
};

/// Parses and validates a target's text form: its kind, option names, values and syntax.
/// Unknown kinds are refused: "target 'tpu': unknown kind 'tpu' (expected llvm, cuda or
/// opencl)".
StatusOr<Target> ParseTarget(std::string_view text);

}  // namespace tuned::target

#endif  // TUNED_TARGET_TARGET_H_

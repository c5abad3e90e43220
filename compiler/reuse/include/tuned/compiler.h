#ifndef TUNED_COMPILER_H_
#define TUNED_COMPILER_H_

/// \file
/// The tuned compiler API: kernels built from the best schedule in a tuning log.
///
///   auto compiler = tuned::Compiler::Open({.db_path = "tuned.db"});
///   auto kernel = (*compiler)->GetKernel("matmul(M=512,N=512,K=512)");
///   (*kernel)->Run({a, b, c});   // 64-byte aligned buffers: inputs, then the output
///
/// A workload is compiled once per process (later requests hit the cache). When the log has no
/// usable record the kernel uses a default schedule; `from_record()` and `fallback_reason()`
/// say so, and stats() counts it.
///
/// A CPU target's kernels run in this process. A GPU target (cuda -arch=sm_XX, opencl) gives a
/// GpuKernel instead: the best record's device program (a cubin, or OpenCL C) and its launches,
/// for the caller's own stream or queue, and the C launcher `tuned compile` writes:
///
///   auto compiler = tuned::Compiler::Open({.db_path = "tuned.db", .target = "cuda -arch=sm_90"});
///   auto kernel = (*compiler)->GetGpuKernel("matmul(M=4096,N=4096,K=4096)");
///   (*kernel)->program();                       // the cubin: cuModuleLoadData
///   (*kernel)->launches();                      // each kernel's grid, block and buffers
///   (*kernel)->WriteLauncher("build/mm", "mm");  // build/mm.cubin, mm.c, mm.h

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/status.h"

namespace tuned {

namespace runtime {
class PackedConstants;
}  // namespace runtime
namespace codegen {
class JitKernel;
class LlvmJit;
}  // namespace codegen
namespace reuse {
class RecordSource;
struct GpuSelection;
}  // namespace reuse
namespace target {
struct Target;
}  // namespace target

class Kernel {
 public:
  ~Kernel();
  /// Runs the kernel: one 64-byte aligned pointer per buffer, inputs then the output. Where
  /// the schedule lays out a constant input (`input w: const ...`, a model's weight), the
  /// first run with that input's address packs it and later runs reuse the packed copy: a
  /// constant input must keep its values for as long as its address is passed.
  Status Run(const std::vector<void*>& buffers) const;
  const std::string& workload_key() const { return workload_key_; }
  bool from_record() const { return from_record_; }
  int64_t record_id() const { return record_id_; }
  const std::string& trace_hash() const { return trace_hash_; }
  /// Why the default schedule was used; empty when from_record().
  const std::string& fallback_reason() const { return fallback_reason_; }
  const std::vector<std::string>& warnings() const { return warnings_; }
  /// Time from request to callable kernel (lookup, replay, lowering, compilation), ms.
  double build_ms() const { return build_ms_; }

 private:
  friend class Compiler;
  Kernel();
  std::unique_ptr<codegen::JitKernel> jit_;
  std::unique_ptr<runtime::PackedConstants> packed_;  // null: the kernel has no packed buffers
  size_t num_inputs_ = 0;
  std::string workload_key_;
  bool from_record_ = false;
  int64_t record_id_ = 0;
  std::string trace_hash_;
  std::string fallback_reason_;
  std::vector<std::string> warnings_;
  double build_ms_ = 0;
};

/// One kernel launch of a GpuKernel, in order.
struct GpuLaunch {
  std::string function;            // the kernel's name in the program
  std::array<int64_t, 3> grid{};   // blocks (work-groups) in x, y, z
  std::array<int64_t, 3> block{};  // threads (work-items) per block in x, y, z
  /// Its arguments, as buffer indices: the workload's inputs, then the output, then the
  /// intermediates (GpuKernel::intermediate_bytes()).
  std::vector<int> buffers;
  int registers = 0;  // per thread, from ptxas (cuda); 0 for opencl
};

/// A GPU target's program for one workload, built from the best record of the log (a GPU target
/// has no default schedule). Immutable; shared by every request for the workload.
class GpuKernel {
 public:
  ~GpuKernel();
  const std::string& workload_key() const { return workload_key_; }
  const std::string& target() const { return target_; }
  /// The device program: for cuda the cubin (SASS for the target's arch, for cuModuleLoadData),
  /// for opencl the OpenCL C source (for clCreateProgramWithSource).
  const std::string& program() const;
  const std::vector<GpuLaunch>& launches() const { return launches_; }
  /// Bytes of each global intermediate buffer the launches pass between kernels.
  const std::vector<int64_t>& intermediate_bytes() const { return intermediate_bytes_; }
  int64_t record_id() const;
  const std::string& trace_hash() const;
  /// The record's measured median time, seconds.
  double median_seconds() const;
  /// Notes on the record chosen (an older code generation timed it), empty when there are none.
  const std::vector<std::string>& warnings() const;
  /// Time from request to built program (lookup, replay, lowering, device build), ms.
  double build_ms() const { return build_ms_; }

  struct Files {
    std::string program;   // OUT.cubin (cuda) or OUT.cl (opencl)
    std::string launcher;  // OUT.c: NAME_load / NAME_<kernel> / NAME, launched on the caller's stream
    std::string header;    // OUT.h
  };
  /// Writes the program and the C launcher `tuned compile` writes, OUT being `output` without
  /// its extension, every entry point prefixed `name` (a C identifier).
  StatusOr<Files> WriteLauncher(const std::string& output, const std::string& name) const;

 private:
  friend class Compiler;
  GpuKernel() = default;
  std::unique_ptr<reuse::GpuSelection> selection_;
  std::string workload_key_;
  std::string target_;
  std::vector<GpuLaunch> launches_;
  std::vector<int64_t> intermediate_bytes_;
  double build_ms_ = 0;
};

class Compiler {
 public:
  struct Options {
    std::string db_path;                  // local tuning database
    std::string target;                   // empty: this machine's CPU; or a GPU target
    bool allow_compatible_target = false; // CPU: accept records of the same ISA and features
  };
  struct Stats {
    int64_t cache_hits = 0;   // requests served from this process's cache
    int64_t record_hits = 0;  // kernels (CPU or GPU) built from a record of the log
    int64_t fallbacks = 0;    // kernels built from the default schedule
  };

  static StatusOr<std::unique_ptr<Compiler>> Open(const Options& options);
  /// Opens with a custom record source (e.g. a server's DatabaseService).
  static StatusOr<std::unique_ptr<Compiler>> Open(const Options& options,
                                                  std::unique_ptr<reuse::RecordSource> source);
  ~Compiler();

  /// The kernel of a workload spec, compiled on first request. Thread-safe. A CPU target's.
  StatusOr<std::shared_ptr<const Kernel>> GetKernel(const std::string& workload_spec);
  /// The GPU program of a workload spec, built on first request from the best record (NotFound
  /// without one). Thread-safe. A GPU target's.
  StatusOr<std::shared_ptr<const GpuKernel>> GetGpuKernel(const std::string& workload_spec);
  Stats stats() const;
  const std::string& target() const { return target_; }

 private:
  Compiler() = default;
  std::unique_ptr<reuse::RecordSource> source_;
  std::unique_ptr<codegen::LlvmJit> jit_;      // a CPU target's
  std::unique_ptr<target::Target> gpu_target_;  // a GPU target's
  Options options_;
  std::string target_;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, std::shared_ptr<const Kernel>> cache_;
  std::unordered_map<std::string, std::shared_ptr<const GpuKernel>> gpu_cache_;
  Stats stats_;
};

}  // namespace tuned

#endif  // TUNED_COMPILER_H_

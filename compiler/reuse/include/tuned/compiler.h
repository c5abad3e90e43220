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
/// Kernels run on this process's CPU: Open refuses a GPU target (cuda, opencl), whose program
/// and C launcher `tuned compile --target ...` writes instead.

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/status.h"

namespace tuned {

namespace codegen {
class JitKernel;
class LlvmJit;
}  // namespace codegen
namespace reuse {
class RecordSource;
}  // namespace reuse

class Kernel {
 public:
  ~Kernel();
  /// Runs the kernel: one 64-byte aligned pointer per buffer, inputs then the output.
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
  Kernel() = default;
  std::unique_ptr<codegen::JitKernel> jit_;
  std::string workload_key_;
  bool from_record_ = false;
  int64_t record_id_ = 0;
  std::string trace_hash_;
  std::string fallback_reason_;
  std::vector<std::string> warnings_;
  double build_ms_ = 0;
};

class Compiler {
 public:
  struct Options {
    std::string db_path;                  // local tuning database
    std::string target;                   // empty: this machine
    bool allow_compatible_target = false; // accept records of the same ISA and features
  };
  struct Stats {
    int64_t cache_hits = 0;   // requests served from this process's cache
    int64_t record_hits = 0;  // kernels built from a record of the log
    int64_t fallbacks = 0;    // kernels built from the default schedule
  };

  static StatusOr<std::unique_ptr<Compiler>> Open(const Options& options);
  /// Opens with a custom record source (e.g. a server's DatabaseService).
  static StatusOr<std::unique_ptr<Compiler>> Open(const Options& options,
                                                  std::unique_ptr<reuse::RecordSource> source);
  ~Compiler();

  /// The kernel of a workload spec, compiled on first request. Thread-safe.
  StatusOr<std::shared_ptr<const Kernel>> GetKernel(const std::string& workload_spec);
  Stats stats() const;
  const std::string& target() const { return target_; }

 private:
  Compiler() = default;
  std::unique_ptr<reuse::RecordSource> source_;
  std::unique_ptr<codegen::LlvmJit> jit_;
  Options options_;
  std::string target_;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, std::shared_ptr<const Kernel>> cache_;
  Stats stats_;
};

}  // namespace tuned

#endif  // TUNED_COMPILER_H_

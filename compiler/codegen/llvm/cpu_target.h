#ifndef TUNED_COMPILER_CODEGEN_LLVM_CPU_TARGET_H_
#define TUNED_COMPILER_CODEGEN_LLVM_CPU_TARGET_H_

/// \file
/// CPU targets of the LLVM code generator and their text form, which is part of every tuning
/// record's key:
///
///   llvm [-mtriple=TRIPLE] [-mcpu=CPU] [-mattr=+f1,-f2,...] [-num-cores=N]
///
/// - `-mtriple` defaults to the triple of the running process; it is printed only when it
///   differs, so host targets read `llvm -mcpu=znver3 -num-cores=2`.
/// - `-mcpu` defaults to `generic`; it must be a CPU LLVM knows for the triple.
/// - `-mattr` lists features that differ from the CPU's defaults (`+` on, `-` off); each must be
///   a feature LLVM knows for the triple. The canonical form lists only real differences, sorted.
/// - `-num-cores` (default 1) is the number of threads parallel loops use.
/// Options may come in any order; the canonical text orders them as above.

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace tuned::codegen {

struct CpuTarget {
  std::string triple;                 // e.g. "x86_64-pc-linux-gnu"
  std::string cpu = "generic";        // e.g. "znver3"
  std::vector<std::string> features;  // differences from the CPU's defaults, "+avx2" / "-fma"
  int num_cores = 1;

  /// The canonical target string (see the file comment).
  std::string ToString() const;
  /// `features` joined with commas, as LLVM takes them.
  std::string FeatureString() const;
  bool operator==(const CpuTarget&) const = default;
};

/// Parses and validates a target string; the error names the offending option, e.g.
/// "target 'llvm -mcpu=foo': unknown cpu 'foo' for x86_64-pc-linux-gnu".
StatusOr<CpuTarget> ParseCpuTarget(std::string_view text);

/// The machine this process runs on, as LLVM detects it: CPU name, the features that differ
/// from that CPU's defaults (a hypervisor may hide some), and the number of cores available to
/// this process.
StatusOr<CpuTarget> HostCpuTarget();

/// Checks that code for `target` can run in this process: same architecture, and every feature
/// the target enables is present on the host. The error names the missing features.
Status CheckRunnableOnHost(const CpuTarget& target);

}  // namespace tuned::codegen

#endif  // TUNED_COMPILER_CODEGEN_LLVM_CPU_TARGET_H_

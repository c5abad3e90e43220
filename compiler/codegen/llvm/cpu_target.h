#ifndef TUNED_COMPILER_CODEGEN_LLVM_CPU_TARGET_H_
#define TUNED_COMPILER_CODEGEN_LLVM_CPU_TARGET_H_

/// \file
/// The LLVM side of CPU targets. Parsing and the text form live in target/target.h (which is
/// part of every tuning record's key); this adds what needs LLVM's tables:
///
/// - the triple is normalised (`aarch64-linux-gnu` -> `aarch64-unknown-linux-gnu`) and dropped
///   when it is the running process's, so host targets read `llvm -mcpu=znver3 -num-cores=2`;
/// - the CPU must be one LLVM knows for the triple (`generic` always is);
/// - every feature must be one LLVM knows for the triple, and the feature list keeps only real
///   differences from the CPU's defaults;
/// - host detection, and whether code for a target runs on this host.

#include <string>
#include <string_view>

#include "common/status.h"
#include "target/target.h"

namespace tuned::codegen {

/// The triple code for `target` is generated for: its own, or the running process's.
std::string LlvmTriple(const target::Target& target);

/// Checks an LLVM CPU target against LLVM and returns its canonical form (see the file comment);
/// a target of another kind is refused. The error names the offending option, e.g.
/// "target 'llvm -mcpu=foo -num-cores=1': unknown cpu 'foo' for x86_64-pc-linux-gnu".
StatusOr<target::Target> ValidateLlvmCpuTarget(const target::Target& target);

/// target::ParseTarget, then ValidateLlvmCpuTarget; errors name `text`.
StatusOr<target::Target> ParseCpuTarget(std::string_view text);

/// The machine this process runs on, as LLVM detects it: CPU name, the features that differ
/// from that CPU's defaults (a hypervisor may hide some), and the number of cores available to
/// this process.
StatusOr<target::Target> HostCpuTarget();

/// Checks that code for `target` can run in this process: same architecture, and every feature
/// the target enables is present on the host. The error names the missing features.
Status CheckRunnableOnHost(const target::Target& target);

}  // namespace tuned::codegen

#endif  // TUNED_COMPILER_CODEGEN_LLVM_CPU_TARGET_H_

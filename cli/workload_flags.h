#ifndef TUNED_CLI_WORKLOAD_FLAGS_H_
#define TUNED_CLI_WORKLOAD_FLAGS_H_

/// \file
/// How every command names its workload: `--workload SPEC` (a library spec such as
/// 'matmul(M=64,N=64,K=64)' or any stored key, definition keys included), or
/// `--workload-file op.tdl` with `--param NAME=VALUE` for the definition's parameters.

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "compiler/ir/workload.h"

namespace tuned::cli {

struct WorkloadFlags {
  std::string spec;
  std::string file;
  std::vector<std::string> params;  // NAME=VALUE

  bool given() const { return !spec.empty() || !file.empty(); }
};

/// Adds --workload-file and --param (for a command whose spec is a positional argument).
void AddWorkloadFileFlags(CLI::App& command, WorkloadFlags& flags);
/// Adds the spec option (`names`, e.g. "--workload,-w"), --workload-file and --param.
void AddWorkloadFlags(CLI::App& command, WorkloadFlags& flags, const std::string& names,
                      const std::string& help);

/// The workload the flags name; exactly one of --workload and --workload-file must be given,
/// and --param only with a file. Errors are one line (a definition's carry file:line:col).
StatusOr<ir::Workload> ResolveWorkload(const WorkloadFlags& flags);

}  // namespace tuned::cli

#endif  // TUNED_CLI_WORKLOAD_FLAGS_H_

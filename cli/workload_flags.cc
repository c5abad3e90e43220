#include "cli/workload_flags.h"

#include "cli/cli_support.h"
#include "compiler/ir/op_library.h"
#include "compiler/ir/tdl/definition.h"

namespace tuned::cli {

void AddWorkloadFileFlags(CLI::App& command, WorkloadFlags& flags) {
  command.add_option("--workload-file", flags.file,
                     "A workload definition file (docs/workload_language.md), e.g. op.tdl");
  command.add_option("--param", flags.params,
                     "NAME=VALUE for a parameter of --workload-file (repeatable)");
}

void AddWorkloadFlags(CLI::App& command, WorkloadFlags& flags, const std::string& names,
                      const std::string& help) {
  command.add_option(names, flags.spec, help);
  AddWorkloadFileFlags(command, flags);
}

StatusOr<ir::Workload> ResolveWorkload(const WorkloadFlags& flags) {
  if (!flags.spec.empty() && !flags.file.empty()) {
    return InvalidArgumentError("--workload and --workload-file name two workloads; expected one");
  }
  if (flags.file.empty()) {
    if (flags.spec.empty()) {
      return InvalidArgumentError("no workload; expected --workload SPEC or --workload-file FILE");
    }
    if (!flags.params.empty()) {
      return InvalidArgumentError("--param " + flags.params.front() +
                                  ": parameters are for --workload-file; a spec names its own");
    }
    return ir::ParseWorkloadSpec(flags.spec);
  }
  ir::DefinitionOptions options;
  options.source_name = flags.file;
  for (const std::string& p : flags.params) {
    const size_t eq = p.find('=');
    if (eq == std::string::npos || eq == 0) {
      return InvalidArgumentError("--param '" + p + "': expected NAME=VALUE, e.g. --param M=512");
    }
    options.params.emplace_back(p.substr(0, eq), p.substr(eq + 1));
  }
  TUNED_ASSIGN_OR_RETURN(std::string text, ReadTextFile(flags.file, "workload file"));
  return ir::ParseDefinition(text, options);
}

}  // namespace tuned::cli

#include "cli/compile_command.h"

#include <cstdio>
#include <memory>
#include <optional>

#include <nlohmann/json.hpp>

#include "cli/compile_model.h"
#include "cli/workload_flags.h"
#include "compiler/codegen/gpu/gpu_candidate.h"
#include "compiler/codegen/llvm/cpu_target.h"
#include "compiler/reuse/apply_history_best.h"
#include "compiler/reuse/emit_library.h"
#include "compiler/reuse/gpu/emit_gpu_library.h"
#include "compiler/reuse/remote/remote_record_source.h"
#include "rpc/credentials.h"
#include "target/target.h"

namespace tuned::cli {
namespace {

struct CompileOptions {
  WorkloadFlags workload;
  ModelFlags model;
  std::string target;
  std::string db_path;
  std::string output;
  std::string server;
  ClientSecurityFlags security;
  std::string name = "tuned_kernel";
  bool allow_compatible = false;
  bool json = false;
};

// The log to read: a server's DatabaseService with --server, else the local database.
StatusOr<std::unique_ptr<reuse::RecordSource>> OpenRecordSource(const CompileOptions& options) {
  if (!options.server.empty()) {
    TUNED_ASSIGN_OR_RETURN(rpc::ClientConfig client,
                           rpc::LoadClientConfig(options.server, options.security.token_file,
                                                 options.security.tls, options.security.tls_ca));
    return reuse::OpenRemoteRecordSource(rpc::Connect(client));
  }
  return reuse::OpenLocalRecordSource(DbPathOrDefault(options.db_path));
}

// A GPU target: the program (OpenCL C source, or a cuda cubin) and its launcher
// (compiler/reuse/gpu/emit_gpu_library.h). Names are checked before the log is read.
Status RunGpuCompile(const CompileOptions& options, const ir::Workload& workload, const target::Target& target) {
  TUNED_RETURN_IF_ERROR(codegen::gpu::CheckGpuTarget(target));
  TUNED_RETURN_IF_ERROR(reuse::CheckLauncherNames(workload, options.name));
  TUNED_ASSIGN_OR_RETURN(auto source, OpenRecordSource(options));
  TUNED_ASSIGN_OR_RETURN(reuse::GpuSelection selected, reuse::SelectGpuProgram(workload, target, *source));
  TUNED_ASSIGN_OR_RETURN(reuse::GpuLibraryFiles out, reuse::EmitGpuLibrary(selected, options.output, options.name));
  for (const std::string& warning : selected.warnings) std::fprintf(stderr, "tuned: warning: %s\n", warning.c_str());
  if (options.json) {
    const char* program = target.kind == target::TargetKind::kCuda ? "cubin" : "source";
    nlohmann::json json = {{"workload", workload.key()},          {"target", target.ToString()},
                           {program, out.program_path},           {"launcher", out.launcher_path},
                           {"header", out.header_path},           {"function", options.name},
                           {"from_record", true},                 {"record_id", selected.record_id},
                           {"trace_hash", selected.trace_hash},   {"median_seconds", selected.median_seconds}};
    std::printf("%s\n", json.dump(2).c_str());
  } else {
    std::printf("wrote %s, %s and %s (record %lld, trace %s)\n", out.program_path.c_str(), out.launcher_path.c_str(),
                out.header_path.c_str(), static_cast<long long>(selected.record_id),
                selected.trace_hash.substr(0, 12).c_str());
  }
  return Status::Ok();
}

// The --target when it names a GPU target.
std::optional<target::Target> GpuTarget(const CompileOptions& options) {
  if (options.target.empty()) return std::nullopt;
  StatusOr<target::Target> target = target::ParseTarget(options.target);
  if (!target.ok() || target->kind == target::TargetKind::kLlvmCpu) return std::nullopt;
  return *target;
}

// The CPU target: --target, or this machine.
StatusOr<target::Target> CpuTarget(const CompileOptions& options) {
  return options.target.empty() ? codegen::HostCpuTarget() : codegen::ParseCpuTarget(options.target);
}

// Every task of a model into one library with a manifest (cli/compile_model.h).
Status RunCompileModel(const CompileOptions& options) {
  if (!options.workload.spec.empty() || !options.workload.file.empty()) {
    return InvalidArgumentError("--model and --workload name two things to compile; expected one");
  }
  if (GpuTarget(options)) return UnimplementedError("--model with a GPU target: not built yet (CPU targets only)");
  TUNED_ASSIGN_OR_RETURN(target::Target target, CpuTarget(options));
  TUNED_ASSIGN_OR_RETURN(auto source, OpenRecordSource(options));
  CompileModelOptions model;
  model.model = options.model;
  model.output = options.output;
  model.prefix = options.name;
  model.allow_compatible = options.allow_compatible;
  model.json = options.json;
  return CompileModel(model, *source, target);
}

Status RunCompile(const CompileOptions& options) {
  if (!options.model.path.empty()) return RunCompileModel(options);
  TUNED_ASSIGN_OR_RETURN(ir::Workload workload, ResolveWorkload(options.workload));
  if (std::optional<target::Target> gpu = GpuTarget(options)) return RunGpuCompile(options, workload, *gpu);
  TUNED_ASSIGN_OR_RETURN(target::Target target, CpuTarget(options));
  TUNED_ASSIGN_OR_RETURN(auto source, OpenRecordSource(options));
  reuse::SelectOptions select;
  select.target = target.ToString();
  select.allow_compatible_target = options.allow_compatible;
  select.function_name = options.name;
  TUNED_ASSIGN_OR_RETURN(reuse::Selection selection, reuse::SelectKernel(workload, *source, select));
  for (const std::string& warning : selection.warnings) std::fprintf(stderr, "tuned: warning: %s\n", warning.c_str());

  std::string comment = "tuned kernel for " + workload.key() + " on '" + select.target + "'; " +
                        (selection.from_record ? "record " + std::to_string(selection.record_id) +
                                                     ", trace " + selection.trace_hash
                                               : "default schedule (" + selection.fallback_reason + ")");
  TUNED_ASSIGN_OR_RETURN(std::string header,
                         reuse::EmitLibrary({selection.func}, target, options.output, comment));
  if (options.json) {
    nlohmann::json out = {{"workload", workload.key()},     {"target", select.target},
                          {"output", options.output},       {"header", header},
                          {"function", options.name},       {"from_record", selection.from_record},
                          {"record_id", selection.record_id}, {"trace_hash", selection.trace_hash},
                          {"record_target", selection.record_target},
                          {"median_seconds", selection.median_seconds},
                          {"fallback_reason", selection.fallback_reason}};
    std::printf("%s\n", out.dump(2).c_str());
  } else {
    std::printf("wrote %s and %s (%s)\n", options.output.c_str(), header.c_str(),
                selection.from_record ? ("record " + std::to_string(selection.record_id) + ", trace " +
                                         selection.trace_hash.substr(0, 12))
                                            .c_str()
                                      : "default schedule");
  }
  return Status::Ok();
}

}  // namespace

void RegisterCompileCommand(Program& program) {
  auto options = std::make_shared<CompileOptions>();
  CLI::App* cmd = program.AddCommand(
      "compile",
      "Build the best recorded schedule of a workload, or of every task of a model, into an object or shared "
      "library (a GPU target: its program and a C launcher)",
      [options] { return RunCompile(*options); });
  AddWorkloadFlags(*cmd, options->workload, "--workload,-w", "Workload spec or stored key");
  AddModelFlags(*cmd, options->model, /*required=*/false);
  cmd->add_option("--target", options->target, "Target string (default: this machine)");
  cmd->add_option("--db", options->db_path, std::string("Tuning database ") + kDbPathHelp);
  cmd->add_option("-o,--output", options->output,
                  "Output file: OUT.o or OUT.so (OUT.h is written beside it); an opencl target: OUT.cl, OUT.c and "
                  "OUT.h (source and launcher); a cuda target: OUT.cubin, OUT.c and OUT.h (cubin and launcher)")
      ->required();
  cmd->add_option("--server", options->server, "Read the log of the server at host:port instead of --db");
  AddClientSecurityFlags(*cmd, options->security);
  cmd->add_option("--name", options->name,
                  "Name of the kernel function (with --model or a GPU target: the prefix of every function)");
  cmd->add_flag("--allow-compatible-target", options->allow_compatible,
                "Accept records of a target with the same ISA and features");
  cmd->add_flag("--json", options->json, "Print JSON");
}

}  // namespace tuned::cli

#include "cli/lower_command.h"

#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/workload_flags.h"
#include "compiler/codegen/gpu/gpu_source.h"
#include "compiler/ir/ir_printer.h"
#include "compiler/ir/op_library.h"
#include "compiler/lower/gpu/lower_gpu.h"
#include "compiler/lower/pipeline.h"
#include "target/target.h"

namespace tuned::cli {
namespace {

struct LowerOptions {
  WorkloadFlags workload;
  std::string trace_file;
  bool default_schedule = false;
  bool json = false;
  std::string target;       // empty: the loop program, for no target in particular
  std::string emit = "loops";
};

// `--emit cuda|opencl`: the trace lowered for a GPU target and printed as its source.
StatusOr<std::string> GpuSource(const LowerOptions& options, std::shared_ptr<const ir::Workload> workload,
                                const schedule::Trace& trace) {
  std::string text = options.target.empty() ? (options.emit == "cuda" ? "cuda -arch=sm_90" : "opencl")
                                            : options.target;
  TUNED_ASSIGN_OR_RETURN(target::Target target, target::ParseTarget(text));
  if (std::string(target::KindName(target.kind)) != options.emit) {
    return InvalidArgumentError("--emit " + options.emit + " needs a " + options.emit + " target, not '" +
                                target.ToString() + "'");
  }
  TUNED_ASSIGN_OR_RETURN(schedule::Schedule sch, schedule::ReplayTrace(workload, trace));
  StatusOr<lower::gpu::GpuProgram> program =
      lower::gpu::LowerGpu(sch, codegen::gpu::LimitsOf(target), "default_function");
  if (!program.ok()) return program.status().WithContext("lowering for " + target.ToString());
  return codegen::gpu::PrintGpuSource(*program, codegen::gpu::DialectOf(target));
}

Status RunLower(const LowerOptions& options) {
  TUNED_ASSIGN_OR_RETURN(ir::Workload parsed, ResolveWorkload(options.workload));
  auto workload = std::make_shared<const ir::Workload>(std::move(parsed));
  schedule::Trace trace;  // none given: the unscheduled program
  if (options.default_schedule) {
    TUNED_ASSIGN_OR_RETURN(trace, lower::DefaultScheduleTrace(workload));
  } else if (!options.trace_file.empty()) {
    TUNED_ASSIGN_OR_RETURN(std::string text, ReadTextFile(options.trace_file, "trace file"));
    TUNED_ASSIGN_OR_RETURN(trace, schedule::TraceFromJson(text));
  }
  if (options.emit != "loops") {
    StatusOr<std::string> source = GpuSource(options, workload, trace);
    if (!source.ok()) return source.status().WithContext(options.trace_file.empty() ? workload->key() : options.trace_file);
    std::printf("%s", source->c_str());
    return Status::Ok();
  }
  if (!options.target.empty()) {
    return InvalidArgumentError("--target is for --emit cuda or --emit opencl (the loop program has no target)");
  }
  StatusOr<lower::LoweredFunc> func = lower::LowerTrace(workload, trace);
  if (!func.ok()) return func.status().WithContext(options.trace_file.empty() ? workload->key() : options.trace_file);
  std::string program = ir::ToString(func->body);
  // What the prepack entry computes once from constant inputs, before the kernel's calls.
  std::string prepack = func->prepack.defined() ? ir::ToString(func->prepack) : "";
  if (options.json) {
    nlohmann::json out = {{"key", workload->key()},
                          {"sha256", workload->key_sha256()},
                          {"flops", workload->flops()},
                          {"program", program}};
    if (!prepack.empty()) out["prepack"] = prepack;
    std::printf("%s\n", out.dump(2).c_str());
  } else {
    std::printf("workload %s\nsha256   %s\nflops    %.0f\n\n", workload->key().c_str(),
                workload->key_sha256().c_str(), workload->flops());
    if (!prepack.empty()) std::printf("prepack (once, from constant inputs):\n%s\nkernel:\n", prepack.c_str());
    std::printf("%s", program.c_str());
  }
  return Status::Ok();
}

}  // namespace

void RegisterLowerCommand(Program& program) {
  auto options = std::make_shared<LowerOptions>();
  CLI::App* cmd = program.AddCommand("lower", "Print a workload's key and its lowered loop program",
                                     [options] { return RunLower(*options); });
  AddWorkloadFlags(*cmd, options->workload, "--workload,-w",
                   "Workload spec, e.g. 'matmul(M=64,N=64,K=64,dtype=float32)', or a stored key");
  CLI::Option* trace = cmd->add_option("--trace", options->trace_file,
                                       "Trace (JSON) to apply; default: none (the unscheduled program)");
  cmd->add_flag("--default-schedule", options->default_schedule,
                "Apply the default schedule (what `tuned compile` builds without a record)")
      ->excludes(trace);
  cmd->add_flag("--json", options->json, "Print JSON");
  cmd->add_option("--target", options->target,
                  "GPU target of --emit cuda|opencl, e.g. 'cuda -arch=sm_90' (default) or 'opencl'");
  cmd->add_option("--emit", options->emit,
                  "What to print: loops (the loop program), cuda (CUDA C) or opencl (OpenCL C); the trace "
                  "must bind every block to blockIdx/threadIdx for cuda and opencl")
      ->check(CLI::IsMember({"loops", "cuda", "opencl"}));
}

}  // namespace tuned::cli

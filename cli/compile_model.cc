#include "cli/compile_model.h"

#include <cstdio>
#include <fstream>

#include <nlohmann/json.hpp>

#include "compiler/codegen/llvm/codegen_llvm.h"
#include "compiler/reuse/apply_history_best.h"
#include "compiler/reuse/emit_library.h"

namespace tuned::cli {
namespace {

std::string FunctionName(const std::string& prefix, size_t task) { return prefix + "_task" + std::to_string(task + 1); }

nlohmann::json Shapes(const model::Graph& g, const std::vector<std::string>& names) {
  nlohmann::json out = nlohmann::json::array();
  for (const std::string& n : names) out.push_back({{"name", n}, {"shape", g.tensor(n).shape}, {"dtype", g.tensor(n).dtype}});
  return out;
}

}  // namespace

std::string ManifestPath(const std::string& library_path) {
  return library_path.substr(0, library_path.rfind('.')) + ".json";
}

Status CompileModel(const CompileModelOptions& options, reuse::RecordSource& source, const target::Target& target) {
  TUNED_ASSIGN_OR_RETURN(LoadedModel loaded, LoadModel(options.model));
  const model::ModelTasks& tasks = loaded.tasks;
  if (tasks.tasks.empty()) {
    return InvalidArgumentError("model '" + options.model.path + "' has no node tuned computes; nothing to compile");
  }
  std::vector<lower::LoweredFunc> funcs;
  nlohmann::json functions = nlohmann::json::array();
  int from_log = 0;
  for (size_t i = 0; i < tasks.tasks.size(); ++i) {
    const model::Task& task = tasks.tasks[i];
    reuse::SelectOptions select;
    select.target = target.ToString();
    select.allow_compatible_target = options.allow_compatible;
    select.function_name = FunctionName(options.prefix, i);
    TUNED_ASSIGN_OR_RETURN(reuse::Selection selection, reuse::SelectKernel(*task.workload, source, select));
    for (const std::string& warning : selection.warnings) std::fprintf(stderr, "tuned: warning: %s\n", warning.c_str());
    from_log += selection.from_record;
    nlohmann::json f = {{"name", select.function_name}, {"packed", codegen::PackedName(select.function_name)},
                        {"key", task.workload->key()}, {"ops", task.ops}, {"weight", task.weight},
                        {"from_record", selection.from_record}};
    if (selection.func.prepack.defined()) {
      f["prepack"] = codegen::PackedName(lower::PrepackName(selection.func.name));
      f["packed_bytes"] = selection.func.PackedBytes();
    }
    if (selection.from_record) {
      f["record_id"] = selection.record_id;
      f["median_seconds"] = selection.median_seconds;
    } else {
      f["fallback_reason"] = selection.fallback_reason;
    }
    functions.push_back(std::move(f));
    funcs.push_back(std::move(selection.func));
  }
  std::string comment = "tuned kernels of model " + options.model.path + " on '" + target.ToString() + "': " +
                        std::to_string(tasks.tasks.size()) + " tasks, " + std::to_string(from_log) +
                        " from the tuning log; the manifest " + ManifestPath(options.output) + " maps the model to them";
  TUNED_ASSIGN_OR_RETURN(std::string header, reuse::EmitLibrary(funcs, target, options.output, comment));

  // Which function computes each kernel of the model, in execution order.
  std::vector<int> task_of_kernel(tasks.kernels.size());
  for (size_t t = 0; t < tasks.tasks.size(); ++t) {
    for (int k : tasks.tasks[t].kernels) task_of_kernel[k] = int(t);
  }
  nlohmann::json steps = nlohmann::json::array();
  for (const model::Partition::Step& step : tasks.partition.steps) {
    if (step.is_kernel) {
      const model::KernelDefinition& k = tasks.kernels[step.index];
      nlohmann::json nodes = nlohmann::json::array();
      for (int n : tasks.partition.kernels[step.index].nodes) nodes.push_back(loaded.graph.nodes[n].name);
      steps.push_back({{"function", FunctionName(options.prefix, task_of_kernel[step.index])},
                       {"nodes", nodes}, {"ops", k.ops}, {"inputs", k.input_tensors}, {"output", k.output_tensor}});
    } else {
      const model::Node& node = loaded.graph.nodes[step.index];
      std::string reason;
      for (const model::OutsideNode& o : tasks.partition.outside) {
        if (o.node == step.index) reason = o.reason;
      }
      steps.push_back({{"outside", node.name}, {"op", node.op}, {"inputs", node.inputs},
                       {"outputs", node.outputs}, {"reason", reason}});
    }
  }
  // Kernel arguments that are not in the model file (folded at import), with their values.
  nlohmann::json derived = nlohmann::json::array();
  for (const auto& [name, tensor] : loaded.graph.tensors) {
    if (tensor.derived_from.empty()) continue;
    derived.push_back({{"name", name}, {"shape", tensor.shape}, {"dtype", tensor.dtype},
                       {"computed_as", tensor.derived_from}, {"values", tensor.values}});
  }
  nlohmann::json manifest = {{"model", options.model.path}, {"input_shapes", options.model.input_shapes},
                             {"derived_constants", derived},
                             {"target", target.ToString()}, {"library", options.output}, {"header", header},
                             {"inputs", Shapes(loaded.graph, loaded.graph.inputs)},
                             {"outputs", Shapes(loaded.graph, loaded.graph.outputs)},
                             {"functions", functions}, {"steps", steps}};
  const std::string manifest_path = ManifestPath(options.output);
  std::ofstream out(manifest_path);
  out << manifest.dump(2) << "\n";
  if (!out) return DataLossError("writing " + manifest_path + " failed");
  if (options.json) {
    std::printf("%s\n", nlohmann::json({{"library", options.output}, {"header", header}, {"manifest", manifest_path},
                                        {"tasks", tasks.tasks.size()}, {"from_record", from_log}})
                            .dump(2)
                            .c_str());
  } else {
    std::printf("wrote %s, %s and %s (%zu tasks, %d from the tuning log, %zu default schedules)\n",
                options.output.c_str(), header.c_str(), manifest_path.c_str(), tasks.tasks.size(), from_log,
                tasks.tasks.size() - size_t(from_log));
  }
  return Status::Ok();
}

}  // namespace tuned::cli

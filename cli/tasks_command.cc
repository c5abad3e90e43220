#include "cli/tasks_command.h"

#include <cstdio>
#include <memory>

#include <nlohmann/json.hpp>

#include "cli/model_flags.h"

namespace tuned::cli {
namespace {

struct TasksFlags {
  ModelFlags model;
  bool json = false;
  bool keys = false;
};

Status RunTasks(const TasksFlags& flags) {
  TUNED_ASSIGN_OR_RETURN(LoadedModel loaded, LoadModel(flags.model));
  const model::ModelTasks& m = loaded.tasks;
  const double total = m.flops();
  auto share = [&](const model::Task& t) { return total > 0 ? t.weight * t.workload->flops() / total : 0.0; };
  if (flags.json) {
    nlohmann::json tasks = nlohmann::json::array(), outside = nlohmann::json::array();
    for (const model::Task& t : m.tasks) {
      tasks.push_back({{"key", t.workload->key()}, {"ops", t.ops}, {"shape", t.shape}, {"weight", t.weight},
                       {"flops", t.workload->flops()}, {"share", share(t)}});
    }
    for (const model::OutsideNode& o : m.partition.outside) {
      const model::Node& node = loaded.graph.nodes[o.node];
      outside.push_back({{"node", node.name}, {"op", node.op}, {"reason", o.reason}});
    }
    nlohmann::json out = {{"model", flags.model.path}, {"nodes", loaded.graph.nodes.size()},
                          {"kernels", m.kernels.size()}, {"flops", total}, {"tasks", tasks},
                          {"outside", outside}};
    std::printf("%s\n", out.dump(2).c_str());
    return Status::Ok();
  }
  std::printf("model     %s: %zu nodes, %zu kernels in %zu tasks, %.3f GFLOP; %zu nodes outside the kernels\n",
              flags.model.path.c_str(), loaded.graph.nodes.size(), m.kernels.size(), m.tasks.size(),
              total / 1e9, m.partition.outside.size());
  std::printf("%4s %6s %10s %7s  %-44s %s\n", "task", "weight", "GFLOP", "share", "ops", "output");
  for (size_t i = 0; i < m.tasks.size(); ++i) {
    const model::Task& t = m.tasks[i];
    std::printf("%4zu %6d %10.4f %6.2f%%  %-44s %s\n", i + 1, t.weight, t.workload->flops() / 1e9,
                100 * share(t), t.ops.c_str(), t.shape.c_str());
    if (flags.keys) std::printf("     key %s\n", t.workload->key().c_str());
  }
  for (const model::OutsideNode& o : m.partition.outside) {
    const model::Node& node = loaded.graph.nodes[o.node];
    std::printf("outside   %s '%s': %s\n", node.op.c_str(), node.name.c_str(), o.reason.c_str());
  }
  return Status::Ok();
}

}  // namespace

void RegisterTasksCommand(Program& program) {
  auto flags = std::make_shared<TasksFlags>();
  CLI::App* cmd = program.AddCommand(
      "tasks", "List a model's tuning tasks: fused kernels, their weights, FLOPs and share",
      [flags] { return RunTasks(*flags); });
  AddModelFlags(*cmd, flags->model);
  cmd->add_flag("--json", flags->json, "Print JSON (with every task's workload key)");
  cmd->add_flag("--keys", flags->keys, "Print each task's workload key under its row");
}

}  // namespace tuned::cli

#include "cli/ops_command.h"

#include <cstdio>
#include <memory>

#include <nlohmann/json.hpp>

#include "compiler/ir/op_library.h"

namespace tuned::cli {
namespace {

std::string KindName(ir::ParamKind kind) {
  switch (kind) {
    case ir::ParamKind::kInt: return "int";
    case ir::ParamKind::kDtype: return "dtype";
    case ir::ParamKind::kBool: return "bool";
    case ir::ParamKind::kChoice: return "choice";
  }
  return "unknown";
}

// One parameter as a spec writer reads it: `K:int`, `pad:int=0`, `layout:choice(a|b)=a`.
std::string ParamText(const ir::ParamSpec& param) {
  std::string text = param.name + ":" + KindName(param.kind);
  if (param.kind == ir::ParamKind::kChoice) {
    text += "(";
    for (size_t i = 0; i < param.choices.size(); ++i) text += (i ? "|" : "") + param.choices[i];
    text += ")";
  }
  if (!param.default_value.empty()) text += "=" + param.default_value;
  return text;
}

Status RunOps(bool json) {
  if (json) {
    nlohmann::json ops = nlohmann::json::array();
    for (const ir::OpDef& op : ir::OpLibrary()) {
      nlohmann::json params = nlohmann::json::array();
      for (const ir::ParamSpec& p : op.params) {
        nlohmann::json param = {{"name", p.name}, {"kind", KindName(p.kind)}, {"required", p.default_value.empty()}};
        if (!p.default_value.empty()) param["default"] = p.default_value;
        if (!p.choices.empty()) param["choices"] = p.choices;
        params.push_back(std::move(param));
      }
      ops.push_back({{"name", op.name}, {"summary", op.summary}, {"params", std::move(params)}});
    }
    std::printf("%s\n", ops.dump(2).c_str());
    return Status::Ok();
  }
  for (const ir::OpDef& op : ir::OpLibrary()) {
    std::string params;
    for (const ir::ParamSpec& p : op.params) params += (params.empty() ? "" : ", ") + ParamText(p);
    std::printf("%-18s %s\n%-18s (%s)\n", op.name.c_str(), op.summary.c_str(), "", params.c_str());
  }
  return Status::Ok();
}

}  // namespace

void RegisterOpsCommand(Program& program) {
  auto json = std::make_shared<bool>(false);
  CLI::App* cmd = program.AddCommand("ops", "List the built-in ops a workload spec may name, with their parameters",
                                     [json] { return RunOps(*json); });
  cmd->add_flag("--json", *json, "Print JSON");
}

}  // namespace tuned::cli

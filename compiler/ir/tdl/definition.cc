#include "compiler/ir/tdl/definition.h"

#include "compiler/ir/tdl/elaborate.h"
#include "compiler/ir/tdl/parser.h"
#include "compiler/ir/tdl/printer.h"

namespace tuned::ir {
namespace {

StatusOr<Workload> ParseFrom(std::string_view text, const tdl::Source& source,
                             std::vector<std::pair<std::string, std::string>> params,
                             const SpecLimits& limits) {
  TUNED_ASSIGN_OR_RETURN(tdl::AstProgram program, tdl::Parse(text, source));
  tdl::ElaborateOptions options;
  options.params = std::move(params);
  options.limits = limits;
  options.key = [](const Workload& w) {
    return std::string(kDefinitionKeyPrefix) + tdl::Print(w, tdl::Layout::kOneLine);
  };
  return tdl::Elaborate(program, source, options);
}

}  // namespace

StatusOr<Workload> ParseDefinition(std::string_view text, const DefinitionOptions& options) {
  if (IsDefinitionKey(text)) return ParseDefinitionKey(text, options.limits);
  return ParseFrom(text, {options.source_name, 1}, options.params, options.limits);
}

bool IsDefinitionKey(std::string_view key) {
  while (!key.empty() && (key.front() == ' ' || key.front() == '\n')) key.remove_prefix(1);
  return key.substr(0, kDefinitionKeyPrefix.size() - 1) ==
         kDefinitionKeyPrefix.substr(0, kDefinitionKeyPrefix.size() - 1);
}

StatusOr<Workload> ParseDefinitionKey(std::string_view key, const SpecLimits& limits) {
  size_t start = key.find(kDefinitionKeyPrefix.substr(0, kDefinitionKeyPrefix.size() - 1));
  if (start == std::string_view::npos || !IsDefinitionKey(key)) {
    return InvalidArgumentError("'" + std::string(key.substr(0, 40)) +
                                "' is not a definition key; expected it to start with '" +
                                std::string(kDefinitionKeyPrefix) + "'");
  }
  const size_t body = start + kDefinitionKeyPrefix.size() - 1;
  return ParseFrom(key.substr(body), {"key", int(body) + 1}, {}, limits);
}

std::string PrintDefinition(const Workload& workload) {
  return tdl::Print(workload, tdl::Layout::kLines);
}

std::string KeyWithoutConstants(const Workload& workload) {
  if (!IsDefinitionKey(workload.key())) return workload.key();
  return std::string(kDefinitionKeyPrefix) + tdl::Print(workload, tdl::Layout::kOneLine, /*mark_constants=*/false);
}

}  // namespace tuned::ir

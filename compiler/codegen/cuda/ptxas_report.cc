#include "compiler/codegen/cuda/ptxas_report.h"

#include <regex>
#include <sstream>

namespace tuned::codegen::cuda {
namespace {

// The number before `unit` in `line` ("2048 bytes smem" -> 2048), or 0 when it is not there.
int NumberBefore(const std::string& line, const std::regex& unit) {
  std::smatch match;
  return std::regex_search(line, match, unit) ? std::stoi(match[1]) : 0;
}

}  // namespace

std::vector<KernelResources> ParsePtxasReport(std::string_view log) {
  static const std::regex kEntry(R"(Compiling entry function '([^']+)')");
  static const std::regex kProperties(R"(Function properties for (\S+))");
  static const std::regex kStack(R"((\d+) bytes stack frame)");
  static const std::regex kSpillStores(R"((\d+) bytes spill stores)");
  static const std::regex kSpillLoads(R"((\d+) bytes spill loads)");
  static const std::regex kRegisters(R"(Used (\d+) registers)");
  static const std::regex kBarriers(R"(used (\d+) barriers)");
  static const std::regex kShared(R"((\d+) bytes smem)");

  std::vector<KernelResources> kernels;
  // Device functions get "Function properties" too; their stack line belongs to no entry.
  std::string properties_of;
  std::istringstream lines{std::string(log)};
  std::string line;
  while (std::getline(lines, line)) {
    std::smatch match;
    if (std::regex_search(line, match, kEntry)) {
      kernels.push_back({.name = match[1]});
      properties_of.clear();
    } else if (std::regex_search(line, match, kProperties)) {
      properties_of = match[1];
    } else if (std::regex_search(line, kStack)) {
      if (kernels.empty() || properties_of != kernels.back().name) continue;
      kernels.back().stack_bytes = NumberBefore(line, kStack);
      kernels.back().spill_store_bytes = NumberBefore(line, kSpillStores);
      kernels.back().spill_load_bytes = NumberBefore(line, kSpillLoads);
    } else if (std::regex_search(line, kRegisters) && !kernels.empty()) {
      kernels.back().registers = NumberBefore(line, kRegisters);
      kernels.back().barriers = NumberBefore(line, kBarriers);
      kernels.back().shared_bytes = NumberBefore(line, kShared);
    }
  }
  return kernels;
}

}  // namespace tuned::codegen::cuda

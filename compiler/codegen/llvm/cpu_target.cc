#include "compiler/codegen/llvm/cpu_target.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <memory>
#include <sstream>

#include <llvm/ADT/StringMap.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/Threading.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/Triple.h>
#include <llvm/TargetParser/X86TargetParser.h>

#include "compiler/codegen/llvm/llvm_internal.h"

namespace tuned::codegen {
namespace {

using SubtargetPtr = std::unique_ptr<llvm::MCSubtargetInfo>;

SubtargetPtr MakeSubtarget(const llvm::Target& target, const std::string& triple,
                           const std::string& cpu, const std::string& features) {
  return SubtargetPtr(target.createMCSubtargetInfo(triple, cpu, features));
}

// A feature is known if switching it on and off gives different feature bits. On x86 the
// target parser's table is consulted first because the subtarget prints a warning for names it
// does not know.
bool IsKnownFeature(const llvm::Target& target, const std::string& triple, const std::string& cpu,
                    const std::string& name) {
  if (llvm::Triple(triple).isX86()) {
    llvm::StringMap<bool> implied;
    llvm::X86::updateImpliedFeatures(name, true, implied);
    if (implied.empty()) return false;
  }
  SubtargetPtr on = MakeSubtarget(target, triple, cpu, "+" + name);
  SubtargetPtr off = MakeSubtarget(target, triple, cpu, "-" + name);
  return on->getFeatureBits() != off->getFeatureBits();
}

// The canonical feature list: only features whose requested state differs from the CPU's
// default, sorted by name. `requested` maps a known feature name to on/off.
std::vector<std::string> CanonicalFeatures(const llvm::Target& target, const std::string& triple,
                                           const std::string& cpu,
                                           const std::map<std::string, bool>& requested) {
  SubtargetPtr base = MakeSubtarget(target, triple, cpu, "");
  std::vector<std::string> out;
  for (const auto& [name, enabled] : requested) {
    SubtargetPtr with = MakeSubtarget(target, triple, cpu, (enabled ? "+" : "-") + name);
    if (with->getFeatureBits() != base->getFeatureBits()) {
      out.push_back((enabled ? "+" : "-") + name);
    }
  }
  return out;
}

StatusOr<int> ParsePositiveInt(std::string_view text) {
  int value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 1) {
    return InvalidArgumentError("'" + std::string(text) + "' is not a positive integer");
  }
  return value;
}

int HostCoreCount() {
  // Physical cores available to this process (affinity masks and cgroup cpusets included).
  int cores = static_cast<int>(llvm::heavyweight_hardware_concurrency().compute_thread_count());
  return std::max(cores, 1);
}

}  // namespace

std::string CpuTarget::FeatureString() const {
  std::string out;
  for (const std::string& f : features) {
    if (!out.empty()) out += ",";
    out += f;
  }
  return out;
}

std::string CpuTarget::ToString() const {
  std::string out = "llvm";
  if (triple != llvm::sys::getProcessTriple()) out += " -mtriple=" + triple;
  out += " -mcpu=" + cpu;
  if (!features.empty()) out += " -mattr=" + FeatureString();
  out += " -num-cores=" + std::to_string(num_cores);
  return out;
}

StatusOr<CpuTarget> ParseCpuTarget(std::string_view text) {
  internal::InitializeLlvm();
  const std::string where = "target '" + std::string(text) + "'";
  std::istringstream words{std::string(text)};
  std::string kind;
  words >> kind;
  if (kind != "llvm") {
    return InvalidArgumentError(where + ": must start with 'llvm', found '" + kind + "'");
  }
  CpuTarget target;
  target.triple = llvm::sys::getProcessTriple();
  std::vector<std::string> feature_items;
  std::string word;
  while (words >> word) {
    size_t eq = word.find('=');
    std::string key = word.substr(0, eq);
    std::string value = eq == std::string::npos ? "" : word.substr(eq + 1);
    if (eq == std::string::npos || value.empty()) {
      return InvalidArgumentError(where + ": option '" + word + "' needs a value (" + key +
                                  "=...)");
    }
    if (key == "-mtriple") {
      target.triple = llvm::Triple::normalize(value);
    } else if (key == "-mcpu") {
      target.cpu = value;
    } else if (key == "-mattr") {
      std::istringstream items(value);
      std::string item;
      while (std::getline(items, item, ',')) feature_items.push_back(item);
    } else if (key == "-num-cores") {
      StatusOr<int> cores = ParsePositiveInt(value);
      if (!cores.ok()) return InvalidArgumentError(where + ": -num-cores: " + cores.status().message());
      target.num_cores = *cores;
    } else {
      return InvalidArgumentError(where + ": unknown option '" + key +
                                  "' (expected -mtriple, -mcpu, -mattr, -num-cores)");
    }
  }
  std::string error;
  const llvm::Target* llvm_target = llvm::TargetRegistry::lookupTarget(target.triple, error);
  if (llvm_target == nullptr) {
    return InvalidArgumentError(where + ": unknown triple '" + target.triple + "'");
  }
  SubtargetPtr probe = MakeSubtarget(*llvm_target, target.triple, "", "");
  if (target.cpu != "generic" && !probe->isCPUStringValid(target.cpu)) {
    return InvalidArgumentError(where + ": unknown cpu '" + target.cpu + "' for " + target.triple);
  }
  std::map<std::string, bool> requested;
  for (const std::string& item : feature_items) {
    if (item.size() < 2 || (item[0] != '+' && item[0] != '-')) {
      return InvalidArgumentError(where + ": feature '" + item + "' must start with + or -");
    }
    std::string name = item.substr(1);
    if (!IsKnownFeature(*llvm_target, target.triple, target.cpu, name)) {
      return InvalidArgumentError(where + ": unknown feature '" + name + "' for " + target.triple);
    }
    requested[name] = item[0] == '+';
  }
  target.features = CanonicalFeatures(*llvm_target, target.triple, target.cpu, requested);
  return target;
}

StatusOr<CpuTarget> HostCpuTarget() {
  internal::InitializeLlvm();
  CpuTarget target;
  target.triple = llvm::sys::getProcessTriple();
  target.cpu = llvm::sys::getHostCPUName().str();
  target.num_cores = HostCoreCount();
  std::string error;
  const llvm::Target* llvm_target = llvm::TargetRegistry::lookupTarget(target.triple, error);
  if (llvm_target == nullptr) {
    return InternalError("host triple '" + target.triple + "' has no LLVM target: " + error);
  }
  llvm::StringMap<bool> host_features;
  std::map<std::string, bool> requested;
  if (llvm::sys::getHostCPUFeatures(host_features)) {
    for (const auto& entry : host_features) {
      std::string name = entry.first().str();
      if (IsKnownFeature(*llvm_target, target.triple, target.cpu, name)) {
        requested[name] = entry.second;
      }
    }
  }
  target.features = CanonicalFeatures(*llvm_target, target.triple, target.cpu, requested);
  return target;
}

Status CheckRunnableOnHost(const CpuTarget& target) {
  TUNED_ASSIGN_OR_RETURN(CpuTarget host, HostCpuTarget());
  llvm::Triple want(target.triple), have(host.triple);
  if (want.getArch() != have.getArch() || want.getOS() != have.getOS()) {
    return FailedPreconditionError("target '" + target.ToString() + "' cannot run on this " +
                                   host.triple + " host");
  }
  std::string error;
  const llvm::Target* llvm_target = llvm::TargetRegistry::lookupTarget(target.triple, error);
  if (llvm_target == nullptr) return InvalidArgumentError("target '" + target.ToString() + "': " + error);
  SubtargetPtr need =
      MakeSubtarget(*llvm_target, target.triple, target.cpu, target.FeatureString());
  SubtargetPtr has = MakeSubtarget(*llvm_target, host.triple, host.cpu, host.FeatureString());
  llvm::FeatureBitset missing = need->getFeatureBits() & ~has->getFeatureBits();
  if (missing.none()) return Status::Ok();
  // Name the missing features: those whose "+name" on the host CPU would add a missing bit.
  std::string names;
  llvm::StringMap<bool> host_features;
  llvm::sys::getHostCPUFeatures(host_features);
  for (const auto& entry : host_features) {
    if (entry.second) continue;
    SubtargetPtr probe =
        MakeSubtarget(*llvm_target, host.triple, host.cpu, "+" + entry.first().str());
    llvm::FeatureBitset added = probe->getFeatureBits() & ~has->getFeatureBits();
    if ((added & missing).any() && (added & ~need->getFeatureBits()).none()) {
      if (!names.empty()) names += ",";
      names += entry.first().str();
      if (names.size() > 80) break;
    }
  }
  return FailedPreconditionError("target '" + target.ToString() +
                                 "' needs CPU features this host lacks" +
                                 (names.empty() ? std::string() : " (" + names + ")"));
}

}  // namespace tuned::codegen

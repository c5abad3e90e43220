#include "compiler/codegen/llvm/cpu_target.h"

#include <algorithm>
#include <map>
#include <memory>

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

int HostCoreCount() {
  // Physical cores available to this process (affinity masks and cgroup cpusets included).
  int cores = static_cast<int>(llvm::heavyweight_hardware_concurrency().compute_thread_count());
  return std::max(cores, 1);
}

// The LLVM checks and canonicalisation of ValidateLlvmCpuTarget; `where` starts every error.
StatusOr<target::Target> Validate(target::Target target, const std::string& where) {
  internal::InitializeLlvm();
  if (target.kind != target::TargetKind::kLlvmCpu) {
    return InvalidArgumentError(where + ": must start with 'llvm', found '" +
                                std::string(target::KindName(target.kind)) + "'");
  }
  const std::string triple = llvm::Triple::normalize(LlvmTriple(target));
  target.triple = triple == llvm::sys::getProcessTriple() ? "" : triple;
  std::string error;
  const llvm::Target* llvm_target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (llvm_target == nullptr) {
    return InvalidArgumentError(where + ": unknown triple '" + triple + "'");
  }
  SubtargetPtr probe = MakeSubtarget(*llvm_target, triple, "", "");
  if (target.cpu != "generic" && !probe->isCPUStringValid(target.cpu)) {
    return InvalidArgumentError(where + ": unknown cpu '" + target.cpu + "' for " + triple);
  }
  std::map<std::string, bool> requested;
  for (const std::string& item : target.features) {
    std::string name = item.substr(1);
    if (!IsKnownFeature(*llvm_target, triple, target.cpu, name)) {
      return InvalidArgumentError(where + ": unknown feature '" + name + "' for " + triple);
    }
    requested[name] = item[0] == '+';
  }
  target.features = CanonicalFeatures(*llvm_target, triple, target.cpu, requested);
  return target;
}

}  // namespace

std::string LlvmTriple(const target::Target& target) {
  return target.triple.empty() ? llvm::sys::getProcessTriple() : target.triple;
}

StatusOr<target::Target> ValidateLlvmCpuTarget(const target::Target& parsed) {
  return Validate(parsed, "target '" + parsed.ToString() + "'");
}

StatusOr<target::Target> ParseCpuTarget(std::string_view text) {
  TUNED_ASSIGN_OR_RETURN(target::Target parsed, target::ParseTarget(text));
  return Validate(parsed, "target '" + std::string(text) + "'");
}

StatusOr<target::Target> HostCpuTarget() {
  internal::InitializeLlvm();
  const std::string triple = llvm::sys::getProcessTriple();
  target::Target target;  // no triple: the process's
  target.cpu = llvm::sys::getHostCPUName().str();
  target.num_cores = HostCoreCount();
  std::string error;
  const llvm::Target* llvm_target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (llvm_target == nullptr) {
    return InternalError("host triple '" + triple + "' has no LLVM target: " + error);
  }
  llvm::StringMap<bool> host_features;
  std::map<std::string, bool> requested;
  if (llvm::sys::getHostCPUFeatures(host_features)) {
    for (const auto& entry : host_features) {
      std::string name = entry.first().str();
      if (IsKnownFeature(*llvm_target, triple, target.cpu, name)) {
        requested[name] = entry.second;
      }
    }
  }
  target.features = CanonicalFeatures(*llvm_target, triple, target.cpu, requested);
  return target;
}

Status CheckRunnableOnHost(const target::Target& target) {
  if (target.kind != target::TargetKind::kLlvmCpu) {
    return FailedPreconditionError("target '" + target.ToString() + "' is not an LLVM CPU target");
  }
  TUNED_ASSIGN_OR_RETURN(target::Target host, HostCpuTarget());
  const std::string triple = LlvmTriple(target), host_triple = LlvmTriple(host);
  llvm::Triple want(triple), have(host_triple);
  if (want.getArch() != have.getArch() || want.getOS() != have.getOS()) {
    return FailedPreconditionError("target '" + target.ToString() + "' cannot run on this " +
                                   host_triple + " host");
  }
  std::string error;
  const llvm::Target* llvm_target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (llvm_target == nullptr) return InvalidArgumentError("target '" + target.ToString() + "': " + error);
  SubtargetPtr need =
      MakeSubtarget(*llvm_target, triple, target.cpu, target.FeatureString());
  SubtargetPtr has = MakeSubtarget(*llvm_target, host_triple, host.cpu, host.FeatureString());
  llvm::FeatureBitset missing = need->getFeatureBits() & ~has->getFeatureBits();
  if (missing.none()) return Status::Ok();
  // Name the missing features: those whose "+name" on the host CPU would add a missing bit.
  std::string names;
  llvm::StringMap<bool> host_features;
  llvm::sys::getHostCPUFeatures(host_features);
  for (const auto& entry : host_features) {
    if (entry.second) continue;
    SubtargetPtr probe =
        MakeSubtarget(*llvm_target, host_triple, host.cpu, "+" + entry.first().str());
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

#include "server/search/candidate_check.h"

#include "compiler/codegen/gpu/gpu_source.h"
#include "compiler/lower/lower.h"
#include "target/target.h"

namespace tuned::search {

CandidateCheck::CandidateCheck(const SearchContext& context) {
  StatusOr<target::Target> target = target::ParseTarget(context.target);
  gpu_ = target.ok() && target->kind != target::TargetKind::kLlvmCpu;
  if (gpu_) limits_ = codegen::gpu::LimitsOf(*target);
}

StatusOr<CheckedCandidate> CandidateCheck::Check(const schedule::Schedule& sch) {
  // The program the features describe: the schedule's own, not its copies per tile edge.
  StatusOr<lower::LoweredFunc> func = lower::Lower(sch, "kernel", {.hoist_guards = false});
  if (!func.ok()) {
    ++dropped_["lowering"];
    return func.status();
  }
  if (!gpu_) return CheckedCandidate{std::move(func).value(), std::nullopt};
  // Lowered without limits, so that the limit a candidate exceeds is named, not parsed.
  StatusOr<lower::gpu::GpuProgram> program = lower::gpu::LowerGpu(sch, lower::gpu::NoGpuLimits());
  if (!program.ok()) {
    ++dropped_["gpu_lowering"];
    return program.status();
  }
  for (const lower::gpu::GpuKernel& kernel : program->kernels) {
    std::string message;
    lower::gpu::GpuLimitKind exceeded = lower::gpu::ExceededLimit(kernel, limits_, &message);
    if (exceeded != lower::gpu::GpuLimitKind::kNone) {
      ++dropped_[std::string(lower::gpu::GpuLimitName(exceeded))];
      return InvalidArgumentError(message);
    }
  }
  return CheckedCandidate{std::move(func).value(), std::move(program).value()};
}

std::string CandidateCheck::DroppedSummary() const {
  std::string text;
  for (const auto& [reason, count] : dropped_) {
    text += (text.empty() ? "" : " ") + reason + "=" + std::to_string(count);
  }
  return text.empty() ? "none" : text;
}

}  // namespace tuned::search

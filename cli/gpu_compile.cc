#include "cli/gpu_compile.h"

#include "cli/gpu_launcher.h"
#include "worker/gpu/cuda_candidate.h"
#include "worker/gpu/gpu_builder.h"

namespace tuned::cli {
namespace {

// Said before the log is read: a build without NVRTC cannot make a cubin of any record.
Status CheckTarget(const target::Target& target) {
  if (target.kind == target::TargetKind::kCuda && worker::gpu::CudaCompilerVersion().empty()) {
    return FailedPreconditionError(
        "tuned compile for '" + target.ToString() +
        "': this build has no CUDA support (no NVRTC: install the CUDA toolkit and "
        "reconfigure with TUNED_ENABLE_CUDA=ON)");
  }
  if (target.kind != target::TargetKind::kCuda && target.kind != target::TargetKind::kOpencl) {
    return InvalidArgumentError("tuned compile for '" + target.ToString() +
                                "': not a GPU target (cuda or opencl)");
  }
  return Status::Ok();
}

// `output` without its extension: OUT of OUT.cl, OUT.cubin or OUT.
std::string Stem(const std::string& output) {
  const size_t dot = output.rfind('.');
  const size_t slash = output.rfind('/');
  return dot != std::string::npos && (slash == std::string::npos || dot > slash)
             ? output.substr(0, dot)
             : output;
}

std::string FileName(const std::string& path) { return path.substr(path.rfind('/') + 1); }

}  // namespace

StatusOr<GpuCompileOutput> CompileGpu(const ir::Workload& workload, const target::Target& target,
                                      reuse::RecordSource& source, const std::string& output,
                                      const std::string& name) {
  TUNED_RETURN_IF_ERROR(CheckTarget(target));
  if (!IsCIdentifier(name)) {
    return InvalidArgumentError("--name '" + name + "' is not a C identifier");
  }
  TUNED_RETURN_IF_ERROR(CheckArgumentNames(workload));
  TUNED_ASSIGN_OR_RETURN(db::BestRecords best,
                         source.Best(workload.key(), target.ToString(), 1, /*toolkit_version=*/""));
  if (best.records.empty()) {
    return NotFoundError("no record of " + workload.key() + " on '" + target.ToString() +
                         "': " + best.miss_reason +
                         " (a GPU target has no default schedule to fall back to)");
  }
  const v1::TuningRecord& record = best.records.front();
  auto shared = std::make_shared<const ir::Workload>(workload);
  // For cuda this is also the NVRTC build of the cubin, as a worker builds it.
  TUNED_ASSIGN_OR_RETURN(v1::GpuCandidateProgram program,
                         worker::gpu::BuildGpuCandidate(shared, record.trace(), target));

  const bool cuda = target.kind == target::TargetKind::kCuda;
  GpuCompileOutput out;
  const std::string stem = Stem(output);
  out.program_path = stem + (cuda ? ".cubin" : ".cl");
  out.launcher_path = stem + ".c";
  out.header_path = stem + ".h";
  out.record_id = record.record_id();
  out.trace_hash = record.trace_hash();
  out.median_seconds = record.result().median_seconds();

  const LauncherInput in{.workload = workload,
                         .target = target,
                         .program = program,
                         .name = name,
                         .program_file = FileName(out.program_path),
                         .header_file = FileName(out.header_path),
                         .record_id = out.record_id,
                         .trace_hash = out.trace_hash};
  TUNED_RETURN_IF_ERROR(
      WriteFileBytes(out.program_path, cuda ? program.binary() : program.source()));
  TUNED_RETURN_IF_ERROR(WriteLauncher(in, cuda ? CudaLauncher(in) : OpenclLauncher(in),
                                      out.header_path, out.launcher_path));
  return out;
}

}  // namespace tuned::cli

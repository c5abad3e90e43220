// SelectGpuProgram and EmitGpuLibrary (emit_gpu_library.h).

#include "compiler/reuse/gpu/emit_gpu_library.h"

#include "compiler/codegen/gpu/gpu_candidate.h"
#include "compiler/reuse/gpu/gpu_launcher.h"

namespace tuned::reuse {
namespace {

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

StatusOr<GpuSelection> SelectGpuProgram(const ir::Workload& workload, const target::Target& target,
                                        RecordSource& source) {
  TUNED_RETURN_IF_ERROR(codegen::gpu::CheckGpuTarget(target));
  // Any toolkit: the record's program is built again here, by this build's compiler. Any timing
  // protocol: version 2 changed how CPU kernels are timed, not GPU ones.
  TUNED_ASSIGN_OR_RETURN(db::BestRecords best,
                         BestOfNewestVersions(source, workload.key(), target.ToString(), 1, /*toolkit_version=*/"",
                                              /*protocol_version=*/0));
  if (best.records.empty()) {
    return NotFoundError("no record of " + workload.key() + " on '" + target.ToString() + "': " + best.miss_reason +
                         " (a GPU target has no default schedule to fall back to)");
  }
  const v1::TuningRecord& record = best.records.front();
  GpuSelection selection;
  selection.workload = std::make_shared<const ir::Workload>(workload);
  selection.target = target;
  TUNED_ASSIGN_OR_RETURN(selection.program,
                         codegen::gpu::BuildGpuCandidate(selection.workload, record.trace(), target));
  selection.record_id = record.record_id();
  selection.trace_hash = record.trace_hash();
  selection.median_seconds = record.result().median_seconds();
  if (std::string older = OlderCodegenWarning(record); !older.empty()) selection.warnings.push_back(older);
  return selection;
}

Status CheckLauncherNames(const ir::Workload& workload, const std::string& name) {
  if (!IsCIdentifier(name)) return InvalidArgumentError("--name '" + name + "' is not a C identifier");
  return CheckArgumentNames(workload);
}

StatusOr<GpuLibraryFiles> EmitGpuLibrary(const GpuSelection& selection, const std::string& output,
                                         const std::string& name) {
  TUNED_RETURN_IF_ERROR(CheckLauncherNames(*selection.workload, name));
  const bool cuda = selection.target.kind == target::TargetKind::kCuda;
  GpuLibraryFiles files;
  const std::string stem = Stem(output);
  files.program_path = stem + (cuda ? ".cubin" : ".cl");
  files.launcher_path = stem + ".c";
  files.header_path = stem + ".h";
  const LauncherInput in{.workload = *selection.workload,
                         .target = selection.target,
                         .program = selection.program,
                         .name = name,
                         .program_file = FileName(files.program_path),
                         .header_file = FileName(files.header_path),
                         .record_id = selection.record_id,
                         .trace_hash = selection.trace_hash};
  TUNED_RETURN_IF_ERROR(
      WriteFileBytes(files.program_path, cuda ? selection.program.binary() : selection.program.source()));
  TUNED_RETURN_IF_ERROR(
      WriteLauncher(in, cuda ? CudaLauncher(in) : OpenclLauncher(in), files.header_path, files.launcher_path));
  return files;
}

}  // namespace tuned::reuse

#include "cli/gpu_compile.h"

#include <fstream>
#include <sstream>

#include "worker/gpu/gpu_builder.h"

namespace tuned::cli {
namespace {

// `text` as a C string literal, one source line per literal line.
std::string CString(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '\\' || c == '"') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n\"\n    \"";
    } else {
      out += c;
    }
  }
  return out + "\"";
}

Status WriteText(const std::string& path, const std::string& text) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file << text;
  file.close();
  if (!file) return UnavailableError("cannot write " + path);
  return Status::Ok();
}

bool IsIdentifier(const std::string& name) {
  if (name.empty() || !(std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_')) return false;
  for (char c : name) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  }
  return true;
}

}  // namespace

StatusOr<GpuCompileOutput> CompileGpu(const ir::Workload& workload, const target::Target& target,
                                      reuse::RecordSource& source, const std::string& output,
                                      const std::string& name) {
  if (target.kind != target::TargetKind::kOpencl) {
    return UnimplementedError("tuned compile for '" + target.ToString() + "': only opencl GPU targets emit a launcher yet");
  }
  if (!IsIdentifier(name)) return InvalidArgumentError("--name '" + name + "' is not a C identifier");
  TUNED_ASSIGN_OR_RETURN(db::BestRecords best, source.Best(workload.key(), target.ToString(), 1, /*toolkit_version=*/""));
  if (best.records.empty()) {
    return NotFoundError("no record of " + workload.key() + " on '" + target.ToString() + "': " + best.miss_reason +
                         " (a GPU target has no default schedule to fall back to)");
  }
  const v1::TuningRecord& record = best.records.front();
  auto shared = std::make_shared<const ir::Workload>(workload);
  TUNED_ASSIGN_OR_RETURN(v1::GpuCandidateProgram program, worker::gpu::BuildGpuCandidate(shared, record.trace(), target));

  GpuCompileOutput out;
  const size_t dot = output.rfind('.');
  const size_t slash = output.rfind('/');
  const std::string stem = dot != std::string::npos && (slash == std::string::npos || dot > slash) ? output.substr(0, dot) : output;
  out.source_path = stem + ".cl";
  out.launcher_path = stem + ".c";
  out.header_path = stem + ".h";
  out.record_id = record.record_id();
  out.trace_hash = record.trace_hash();
  out.median_seconds = record.result().median_seconds();

  std::vector<ir::Buffer> args = workload.arguments();
  std::string params;  // "cl_mem A, cl_mem B, cl_mem C"
  for (const ir::Buffer& b : args) params += (params.empty() ? "" : ", ") + std::string("cl_mem ") + b->name;
  const std::string comment = "// tuned OpenCL kernels for " + workload.key() + " on '" + target.ToString() +
                              "'; record " + std::to_string(out.record_id) + ", trace " + out.trace_hash + ".\n";

  std::ostringstream h;
  const std::string guard = "TUNED_" + name + "_H_";
  h << comment << "#ifndef " << guard << "\n#define " << guard << "\n\n#include <CL/cl.h>\n\n"
    << "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n"
    << "/* The program source (also in " << out.source_path.substr(out.source_path.rfind('/') + 1) << "). */\n"
    << "const char* " << name << "_source(void);\n"
    << "/* Builds the program for `device` of `context`. */\n"
    << "cl_int " << name << "_build(cl_context context, cl_device_id device, cl_program* program);\n";
  std::ostringstream c;
  c << comment << "#include \"" << out.header_path.substr(out.header_path.rfind('/') + 1) << "\"\n\n"
    << "const char* " << name << "_source(void) {\n  return " << CString(program.source()) << ";\n}\n\n"
    << "cl_int " << name << "_build(cl_context context, cl_device_id device, cl_program* program) {\n"
    << "  const char* text = " << name << "_source();\n  cl_int err = CL_SUCCESS;\n"
    << "  *program = clCreateProgramWithSource(context, 1, &text, NULL, &err);\n"
    << "  if (err != CL_SUCCESS) return err;\n"
    << "  return clBuildProgram(*program, 1, &device, \"\", NULL, NULL);\n}\n";

  // Buffer names of a launch's arguments: the workload's, then the intermediates.
  auto buffer_name = [&](uint32_t index) {
    return index < args.size() ? args[index]->name : "intermediate" + std::to_string(index - args.size());
  };
  std::ostringstream all;  // the body of NAME
  all << "  cl_int err = CL_SUCCESS;\n  cl_context context;\n"
      << "  err = clGetCommandQueueInfo(queue, CL_QUEUE_CONTEXT, sizeof(context), &context, NULL);\n"
      << "  if (err != CL_SUCCESS) return err;\n";
  for (int i = 0; i < program.intermediate_bytes_size(); ++i) {
    all << "  cl_mem intermediate" << i << " = clCreateBuffer(context, CL_MEM_READ_WRITE, " << program.intermediate_bytes(i)
        << ", NULL, &err);\n  if (err != CL_SUCCESS) return err;\n";
  }
  for (const v1::GpuKernelLaunch& launch : program.launches()) {
    std::string kparams;
    std::string call_args;
    for (uint32_t index : launch.buffers()) {
      kparams += std::string(", cl_mem ") + buffer_name(index);
      call_args += ", " + buffer_name(index);
    }
    const std::string entry = name + "_" + launch.function();
    h << "/* Kernel " << launch.function() << " of the program: grid (" << launch.grid(0) << ", " << launch.grid(1) << ", "
      << launch.grid(2) << "), block (" << launch.block(0) << ", " << launch.block(1) << ", " << launch.block(2)
      << "); enqueued on `queue`. */\n"
      << "cl_int " << entry << "(cl_command_queue queue, cl_program program" << kparams << ");\n";
    c << "\ncl_int " << entry << "(cl_command_queue queue, cl_program program" << kparams << ") {\n"
      << "  cl_int err = CL_SUCCESS;\n"
      << "  cl_kernel kernel = clCreateKernel(program, \"" << launch.function() << "\", &err);\n"
      << "  if (err != CL_SUCCESS) return err;\n";
    for (int a = 0; a < launch.buffers_size(); ++a) {
      c << "  if (err == CL_SUCCESS) err = clSetKernelArg(kernel, " << a << ", sizeof(cl_mem), &"
        << buffer_name(launch.buffers(a)) << ");\n";
    }
    c << "  const size_t local[3] = {" << launch.block(0) << ", " << launch.block(1) << ", " << launch.block(2) << "};\n"
      << "  const size_t global[3] = {" << launch.grid(0) * launch.block(0) << ", " << launch.grid(1) * launch.block(1)
      << ", " << launch.grid(2) * launch.block(2) << "};\n"
      << "  if (err == CL_SUCCESS) err = clEnqueueNDRangeKernel(queue, kernel, 3, NULL, global, local, 0, NULL, NULL);\n"
      << "  clReleaseKernel(kernel);\n  return err;\n}\n";
    all << "  if (err == CL_SUCCESS) err = " << entry << "(queue, program" << call_args << ");\n";
  }
  for (int i = 0; i < program.intermediate_bytes_size(); ++i) all << "  clReleaseMemObject(intermediate" << i << ");\n";
  all << "  return err;\n";
  h << "/* Every kernel in order on `queue` (the workload's buffers; intermediates are allocated). */\n"
    << "cl_int " << name << "(cl_command_queue queue, cl_program program, " << params << ");\n"
    << "\n#ifdef __cplusplus\n}\n#endif\n\n#endif\n";
  c << "\ncl_int " << name << "(cl_command_queue queue, cl_program program, " << params << ") {\n" << all.str() << "}\n";

  TUNED_RETURN_IF_ERROR(WriteText(out.source_path, program.source()));
  TUNED_RETURN_IF_ERROR(WriteText(out.launcher_path, c.str()));
  TUNED_RETURN_IF_ERROR(WriteText(out.header_path, h.str()));
  return out;
}

}  // namespace tuned::cli

#include "compiler/reuse/gpu/gpu_launcher.h"

#include <cctype>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>

namespace tuned::reuse {

Status WriteLauncher(const LauncherInput& in, const LauncherText& text,
                     const std::string& header_path, const std::string& launcher_path) {
  const std::string comment = "// tuned " + text.dialect + " kernels for " + in.workload.key() +
                              " on '" + in.target.ToString() + "'; record " +
                              std::to_string(in.record_id) + ", trace " + in.trace_hash + ".\n";
  const std::string guard = "TUNED_" + in.name + "_H_";
  const std::string header = comment + "#ifndef " + guard + "\n#define " + guard +
                             "\n\n#include <" + text.api_header +
                             ">\n\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n" +
                             text.declarations + "\n#ifdef __cplusplus\n}\n#endif\n\n#endif\n";
  const std::string launcher =
      comment + "#include \"" + in.header_file + "\"\n\n" + text.definitions;
  TUNED_RETURN_IF_ERROR(WriteFileBytes(launcher_path, launcher));
  return WriteFileBytes(header_path, header);
}

Status WriteFileBytes(const std::string& path, const std::string& bytes) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file << bytes;
  file.close();
  if (!file) return UnavailableError("cannot write " + path);
  return Status::Ok();
}

std::string CStringLiteral(const std::string& text) {
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

std::string CByteArray(const std::string& bytes) {
  std::string out = "{";
  char hex[8];
  for (size_t i = 0; i < bytes.size(); ++i) {
    out += i % 16 == 0 ? "\n   " : "";
    std::snprintf(hex, sizeof(hex), " 0x%02x,", static_cast<unsigned char>(bytes[i]));
    out += hex;
  }
  return out + "\n}";
}

std::string BufferName(const LauncherInput& in, uint32_t index) {
  const std::vector<ir::Buffer>& args = in.workload.arguments();
  return index < args.size() ? args[index]->name
                             : "intermediate" + std::to_string(index - args.size());
}

std::vector<std::string> LaunchBufferNames(const LauncherInput& in,
                                           const v1::GpuKernelLaunch& launch) {
  std::vector<std::string> names;
  for (uint32_t index : launch.buffers()) names.push_back(BufferName(in, index));
  return names;
}

bool IsCIdentifier(const std::string& name) {
  if (name.empty() || !(std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_')) return false;
  for (char c : name) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  }
  return true;
}

Status CheckArgumentNames(const ir::Workload& workload) {
  // What opencl_launcher.cc and cuda_launcher.cc declare inside their functions.
  static const std::set<std::string> kLauncherNames = {"stream", "module",  "function", "params",
                                                       "err",    "freed",   "queue",    "program",
                                                       "context", "device", "kernel",   "source"};
  for (const ir::Buffer& b : workload.arguments()) {
    const std::string& name = b->name;
    if (!IsCIdentifier(name)) return InvalidArgumentError("buffer '" + name + "' is not a C identifier: no launcher can name it");
    if (kLauncherNames.count(name) || name.rfind("intermediate", 0) == 0) {
      return InvalidArgumentError("buffer '" + name +
                                  "' has the name of a launcher parameter or local: rename it in the definition");
    }
  }
  return Status::Ok();
}

std::vector<std::string> ArgumentNames(const LauncherInput& in) {
  std::vector<std::string> names;
  for (const ir::Buffer& b : in.workload.arguments()) names.push_back(b->name);
  return names;
}

std::string ParameterList(const std::string& leading, const std::string& type,
                          const std::vector<std::string>& buffers) {
  std::string out = leading;
  for (const std::string& b : buffers) out += ", " + type + " " + b;
  return out;
}

std::string ArgumentList(const std::string& leading, const std::vector<std::string>& buffers) {
  std::string out = leading;
  for (const std::string& b : buffers) out += ", " + b;
  return out;
}

std::string Dims(const google::protobuf::RepeatedField<int64_t>& dims) {
  std::ostringstream out;
  out << "(" << dims.Get(0) << ", " << dims.Get(1) << ", " << dims.Get(2) << ")";
  return out.str();
}

}  // namespace tuned::reuse

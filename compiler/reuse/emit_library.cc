#include "compiler/reuse/emit_library.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "compiler/codegen/llvm/codegen_llvm.h"

namespace tuned::reuse {
namespace {

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Runs a command without a shell; returns its exit status or -1.
int RunProcess(const std::vector<std::string>& argv) {
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) < 0) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

const char* RuntimeArchivePath() { return TUNED_RUNTIME_ARCHIVE; }

StatusOr<std::string> EmitLibrary(const std::vector<lower::LoweredFunc>& funcs,
                                  const codegen::CpuTarget& target, const std::string& path,
                                  const std::string& header_comment) {
  bool shared = EndsWith(path, ".so");
  if (!shared && !EndsWith(path, ".o")) {
    return InvalidArgumentError("output '" + path + "' must end in .o or .so");
  }
  std::string header_path = path.substr(0, path.rfind('.')) + ".h";
  std::string object_path = shared ? path + ".tmp.o" : path;
  TUNED_RETURN_IF_ERROR(codegen::WriteObjectFile(funcs, target, object_path));
  if (shared) {
    std::string cc = std::getenv("CC") ? std::getenv("CC") : "cc";
    std::string soname = std::filesystem::path(path).filename().string();
    int rc = RunProcess({cc, "-shared", "-Wl,-soname," + soname, "-o", path, object_path,
                         RuntimeArchivePath(), "-fopenmp", "-lstdc++", "-lm"});
    std::filesystem::remove(object_path);
    if (rc != 0) {
      return InternalError("linking " + path + " with '" + cc + "' failed (exit " + std::to_string(rc) + ")");
    }
  }
  std::ofstream header(header_path);
  if (!header) return NotFoundError("cannot write " + header_path);
  header << "/* " << header_comment << " */\n" << codegen::EmitCHeader(funcs);
  if (!header) return DataLossError("writing " + header_path + " failed");
  return header_path;
}

}  // namespace tuned::reuse

#include "compiler/reuse/emit_library.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "compiler/codegen/llvm/codegen_llvm.h"

namespace tuned::reuse {

// The bytes of libtuned_runtime.a, generated from the build's archive (cmake/EmbedFile.cmake).
extern const unsigned char kRuntimeArchive[];
extern const std::size_t kRuntimeArchive_size;

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

// A scratch folder removed with its contents when the object goes away.
class ScratchDir {
 public:
  static StatusOr<ScratchDir> Create() {
    std::string pattern = (std::filesystem::temp_directory_path() / "tuned-emit-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) return InternalError("cannot create a folder like " + pattern);
    return ScratchDir(pattern);
  }
  ScratchDir(ScratchDir&& other) noexcept : path_(std::move(other.path_)) { other.path_.clear(); }
  ~ScratchDir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }

 private:
  explicit ScratchDir(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

std::vector<std::string> SplitWords(const std::string& text) {
  std::vector<std::string> words;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    if (end > start) words.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return words;
}

// Links `object` and the embedded runtime archive into the shared library `path`.
Status LinkSharedLibrary(const std::string& object, const std::string& path, const ScratchDir& scratch) {
  std::string archive = scratch.path() + "/libtuned_runtime.a";
  {
    std::ofstream out(archive, std::ios::binary);
    out.write(reinterpret_cast<const char*>(kRuntimeArchive), static_cast<std::streamsize>(kRuntimeArchive_size));
    if (!out) return DataLossError("cannot write " + archive);
  }
  std::string cc = std::getenv("CC") ? std::getenv("CC") : TUNED_RUNTIME_LINKER;
  std::string soname = std::filesystem::path(path).filename().string();
  std::vector<std::string> argv = {cc, "-shared", "-Wl,-soname," + soname, "-o", path, object, archive};
  for (std::string& flag : SplitWords(TUNED_RUNTIME_LINK_FLAGS)) argv.push_back(std::move(flag));
  int rc = RunProcess(argv);
  if (rc != 0) {
    return InternalError("linking " + path + " with '" + cc + "' failed (exit " + std::to_string(rc) +
                         (rc == 127 ? ": no C compiler; set CC" : "") + ")");
  }
  return Status::Ok();
}

// The first lines of the header: where the kernel came from and how to link it.
std::string HeaderPreamble(const std::string& comment, const std::string& path, bool shared) {
  std::string file = std::filesystem::path(path).filename().string();
  std::string how =
      shared ? "Self-contained (the tuned runtime is linked in; OpenMP's is loaded at run time):\n"
               "     cc app.c " + file + " -Wl,-rpath,'$ORIGIN'\n"
             : "Link with the tuned runtime of an installed tuned:\n"
               "     cc app.c " + file + " $(pkg-config --libs tuned-runtime)\n"
               "   (that is -L<prefix>/lib -ltuned_runtime " TUNED_RUNTIME_LINK_FLAGS "; set\n"
               "   PKG_CONFIG_PATH=<prefix>/lib/pkgconfig for a prefix pkg-config does not search).\n"
               "   CMake: find_package(tuned) and target_link_libraries(app PRIVATE tuned::runtime).\n";
  return "/* " + comment + ".\n   " + how + "*/\n";
}

}  // namespace

StatusOr<std::string> EmitLibrary(const std::vector<lower::LoweredFunc>& funcs,
                                  const target::Target& target, const std::string& path,
                                  const std::string& header_comment) {
  bool shared = EndsWith(path, ".so");
  if (!shared && !EndsWith(path, ".o")) {
    return InvalidArgumentError("output '" + path + "' must end in .o or .so");
  }
  std::filesystem::path parent = std::filesystem::path(path).parent_path();
  std::error_code error;
  if (!parent.empty()) std::filesystem::create_directories(parent, error);
  if (error) return NotFoundError("cannot create the folder " + parent.string() + ": " + error.message());

  std::string header_path = path.substr(0, path.rfind('.')) + ".h";
  if (shared) {
    TUNED_ASSIGN_OR_RETURN(ScratchDir scratch, ScratchDir::Create());
    std::string object = scratch.path() + "/kernel.o";
    TUNED_RETURN_IF_ERROR(codegen::WriteObjectFile(funcs, target, object));
    TUNED_RETURN_IF_ERROR(LinkSharedLibrary(object, path, scratch));
  } else {
    TUNED_RETURN_IF_ERROR(codegen::WriteObjectFile(funcs, target, path));
  }
  std::ofstream header(header_path);
  if (!header) return NotFoundError("cannot write " + header_path);
  header << HeaderPreamble(header_comment, path, shared) << codegen::EmitCHeader(funcs);
  if (!header) return DataLossError("writing " + header_path + " failed");
  return header_path;
}

}  // namespace tuned::reuse

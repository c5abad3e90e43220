// The driver of a fuzz target outside libFuzzer: runs the target once on every file named on
// the command line (folders: every file in them). The normal build links each target with it,
// so CTest replays the corpus and every regression input without clang; a property the
// target checks aborts the run, as under the fuzzer.

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
// Optional, as under libFuzzer: a target that defines it gets it called once before any input.
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int* argc, char*** argv);

namespace {

int RunFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "cannot read %s\n", path.c_str());
    return 1;
  }
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (LLVMFuzzerInitialize != nullptr) LLVMFuzzerInitialize(&argc, &argv);
  int inputs = 0, failures = 0;
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path arg = argv[i];
    if (std::filesystem::is_directory(arg)) {
      for (const auto& entry : std::filesystem::directory_iterator(arg)) {
        if (!entry.is_regular_file()) continue;
        ++inputs;
        failures += RunFile(entry.path());
      }
    } else {
      ++inputs;
      failures += RunFile(arg);
    }
  }
  if (inputs == 0) {
    std::fprintf(stderr, "no inputs: give corpus files or folders\n");
    return 1;
  }
  std::printf("%d inputs ran, %d unreadable\n", inputs, failures);
  return failures == 0 ? 0 : 1;
}

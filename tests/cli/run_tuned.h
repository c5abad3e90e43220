#ifndef TUNED_TESTS_CLI_RUN_TUNED_H_
#define TUNED_TESTS_CLI_RUN_TUNED_H_

// Runs the real `tuned` binary (TUNED_BINARY) and collects what it prints: the one way every
// command-line test calls it.

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace tuned::testing {

/// A test with a scratch folder of its own (`dir_`), removed after it.
class ScratchDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/tuned_cli_test_XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string WriteFile(const std::string& name, const std::string& contents) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << contents;
    return path;
  }

  std::string dir_;
};

struct CommandOutput {
  int exit_code = -1;
  std::string out;
  std::string err;
  std::string all() const { return out + err; }
};

/// `tuned ARGS` through the shell (so ARGS may quote), with TUNED_DB unset so that no test reads
/// a database it did not name; stdout and stderr apart.
inline CommandOutput RunTuned(const std::string& args) {
  char err_path[] = "/tmp/tuned_cli_stderr_XXXXXX";
  int fd = mkstemp(err_path);
  CommandOutput result;
  if (fd < 0) return result;
  close(fd);
  std::string command = "env -u TUNED_DB " + std::string(TUNED_BINARY) + " " + args + " 2>" + err_path;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe != nullptr) {
    std::array<char, 4096> buffer;
    size_t n;
    while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) result.out.append(buffer.data(), n);
    int status = pclose(pipe);
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  std::ifstream err(err_path);
  std::ostringstream text;
  text << err.rdbuf();
  result.err = text.str();
  std::remove(err_path);
  return result;
}

}  // namespace tuned::testing

#endif  // TUNED_TESTS_CLI_RUN_TUNED_H_

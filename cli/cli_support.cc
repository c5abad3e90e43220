#include "cli/cli_support.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "common/logging.h"
#include "common/version.h"

namespace tuned::cli {

StatusOr<std::string> ReadTextFile(const std::string& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFoundError("cannot read " + what + " " + path);
  std::ostringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

std::string DefaultDbPath() {
  const char* env = std::getenv("TUNED_DB");
  return env != nullptr && *env != '\0' ? env : "./tuned.db";
}

std::string DbPathOrDefault(const std::string& db_path) {
  return db_path.empty() ? DefaultDbPath() : db_path;
}

void AddClientSecurityFlags(CLI::App& command, ClientSecurityFlags& flags) {
  command.add_option("--token-file", flags.token_file, "File holding the server's token");
  command.add_flag("--tls", flags.tls, "Connect with TLS (system roots unless --tls-ca)");
  command.add_option("--tls-ca", flags.tls_ca, "PEM roots to check the server's certificate");
}

int ReportError(const Status& status) {
  if (status.ok()) return kExitOk;
  std::fprintf(stderr, "tuned: %s\n", status.message().c_str());
  switch (status.code()) {
    case StatusCode::kInvalidArgument:
    case StatusCode::kOutOfRange:
    case StatusCode::kNotFound:
    case StatusCode::kAlreadyExists:
      return kExitUsage;
    default:
      return kExitFailure;
  }
}

Program::Program(std::string name, std::string description)
    : app_(std::move(description), std::move(name)) {
  app_.set_version_flag("--version", std::string("tuned ") + kTunedVersion);
  app_.add_option("--log-level", log_level_,
                  "Log level: trace, debug, info, warn, error, off (default: $TUNED_LOG or warn)");
}

CLI::App* Program::AddCommand(const std::string& name, const std::string& description,
                              std::function<Status()> action) {
  CLI::App* sub = app_.add_subcommand(name, description);
  commands_.emplace_back(sub, std::move(action));
  return sub;
}

int Program::Run(int argc, char** argv) {
  try {
    app_.parse(argc, argv);
  } catch (const CLI::Success& e) {  // --help, --version
    return app_.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "%s: %s (see --help)\n", app_.get_name().c_str(), e.what());
    return kExitUsage;
  }
  if (Status status = InitLogging(log_level_); !status.ok()) return ReportError(status);
  for (auto& [sub, action] : commands_) {
    if (sub->parsed()) return ReportError(action());
  }
  if (main_action_) return ReportError(main_action_());
  std::fprintf(stderr, "%s: a sub-command is required (see --help)\n", app_.get_name().c_str());
  return kExitUsage;
}

}  // namespace tuned::cli

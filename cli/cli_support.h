#ifndef TUNED_CLI_CLI_SUPPORT_H_
#define TUNED_CLI_CLI_SUPPORT_H_

/// \file
/// What every tuned command-line entry point shares: the exit-code convention (0 ok, 2 bad usage
/// or bad input with a one-line reason on stderr, 1 any other failure), the common flags, and
/// dispatch to the selected sub-command once logging is set up.

#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "common/status.h"

namespace tuned::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

/// The whole contents of a file; NotFound naming `what` and the path when it cannot be read.
StatusOr<std::string> ReadTextFile(const std::string& path, const std::string& what);

/// The tuning database of a command run without --db: $TUNED_DB when set and not empty, else
/// ./tuned.db. The one rule for `tuned serve`, `tune`, `compile` and `db`.
std::string DefaultDbPath();
/// `db_path` when given, else DefaultDbPath().
std::string DbPathOrDefault(const std::string& db_path);
/// How --db's help names that default.
inline constexpr char kDbPathHelp[] =
    "(an SQLite file or a postgresql:// URL; default: $TUNED_DB or ./tuned.db)";

/// How a client reaches a server beyond its address: the token file and TLS.
struct ClientSecurityFlags {
  std::string token_file;
  bool tls = false;
  std::string tls_ca;
};

/// Adds --token-file, --tls and --tls-ca to a client command.
void AddClientSecurityFlags(CLI::App& command, ClientSecurityFlags& flags);

/// Prints "tuned: <message>" on stderr and returns the exit code of the convention.
int ReportError(const Status& status);

/// A command-line program: a CLI11 app plus the action of each sub-command.
class Program {
 public:
  Program(std::string name, std::string description);

  CLI::App& app() { return app_; }

  /// Adds a sub-command whose action runs after parsing and logging set-up.
  CLI::App* AddCommand(const std::string& name, const std::string& description,
                       std::function<Status()> action);

  /// Sets the action run when no sub-command is given (for single-purpose programs).
  void SetMainAction(std::function<Status()> action) { main_action_ = std::move(action); }

  /// Parses argv and runs the chosen action; returns the process exit code.
  int Run(int argc, char** argv);

 private:
  CLI::App app_;
  std::string log_level_;
  std::vector<std::pair<CLI::App*, std::function<Status()>>> commands_;
  std::function<Status()> main_action_;
};

}  // namespace tuned::cli

#endif  // TUNED_CLI_CLI_SUPPORT_H_

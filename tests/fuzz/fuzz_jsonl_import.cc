// JSON Lines record import (`tuned db import`): files from other machines. Each input is
// imported into a fresh scratch database; whatever was accepted must export and import again
// into another fresh database as the same number of records.

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <sstream>
#include <string>

#include "common/logging.h"
#include "fuzz_check.h"
#include "tuning_db/database.h"
#include "tuning_db/jsonl.h"

using namespace tuned;

namespace {

// A scratch SQLite file of this process, removed before each open (with its journal files);
// in memory-backed /dev/shm where there is one, so syncs cost nothing.
std::unique_ptr<db::Database> FreshDatabase(const std::string& name) {
  static const std::filesystem::path folder = std::filesystem::is_directory("/dev/shm")
                                                  ? std::filesystem::path("/dev/shm")
                                                  : std::filesystem::temp_directory_path();
  const std::string path = (folder /
                            ("tuned-fuzz-" + std::to_string(getpid()) + "-" + name + ".db"))
                               .string();
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) std::filesystem::remove(path + suffix);
  StatusOr<std::unique_ptr<db::Database>> opened = db::OpenSqliteDatabase(path);
  fuzz::Check(opened.ok(), "cannot open a scratch database: " +
                               (opened.ok() ? std::string() : opened.status().message()));
  return std::move(opened).value();
}

}  // namespace

// Quiet: a log line per input (schema migrations, workers joining) would dominate the run.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  (void)InitLogging("off");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::unique_ptr<db::Database> first = FreshDatabase("a");
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  StatusOr<db::ImportStats> imported = db::ImportJsonl(*first, in, "fuzz.jsonl");
  if (!imported.ok()) {
    fuzz::Check(!imported.status().message().empty(), "a refused import has no error message");
  }
  // Whatever was stored (all of it, or the batches before a bad line) exports and re-imports.
  std::ostringstream exported;
  StatusOr<db::ExportStats> written = db::ExportJsonl(*first, exported);
  fuzz::Check(written.ok(), "export of imported records fails: " +
                                (written.ok() ? std::string() : written.status().message()));
  std::unique_ptr<db::Database> second = FreshDatabase("b");
  std::istringstream again(exported.str());
  StatusOr<db::ImportStats> reimported = db::ImportJsonl(*second, again, "exported.jsonl");
  fuzz::Check(reimported.ok(), "exported records do not import: " +
                                   (reimported.ok() ? std::string() : reimported.status().message()));
  fuzz::Check(reimported->inserted == written->records,
              "export/import changes the number of records: " + std::to_string(written->records) +
                  " exported, " + std::to_string(reimported->inserted) + " imported");
  return 0;
}

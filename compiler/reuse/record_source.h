#ifndef TUNED_COMPILER_REUSE_RECORD_SOURCE_H_
#define TUNED_COMPILER_REUSE_RECORD_SOURCE_H_

/// \file
/// Where the compiler reads tuning records from: a local database file, or a server's
/// DatabaseService (remote/remote_record_source.h, library tuned_reuse_remote). Both answer
/// every call alike on the same log.

#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "tuning_db/database.h"

namespace tuned::reuse {

class RecordSource {
 public:
  virtual ~RecordSource() = default;
  /// The best OK records of a workload on a target, best first, measured with
  /// `toolkit_version` or an unknown one ("": any; a GPU source is compiled by the user's
  /// toolkit, not this build's), of code generation `codegen_version` and timing protocol
  /// `protocol_version` (0: any); an empty list with the miss reason when there are none.
  virtual StatusOr<db::BestRecords> Best(const std::string& workload_key, const std::string& target,
                                         int limit, const std::string& toolkit_version,
                                         uint32_t codegen_version, uint32_t protocol_version) = 0;
  /// Targets that have records of the workload.
  virtual StatusOr<std::vector<std::string>> Targets(const std::string& workload_key) = 0;
};

/// The best records of the newest versions the log holds: this build's code generation
/// (kCodegenVersion) before any other, and within it timing protocol `protocol_version` before
/// any other (0: any at once). A record of an older code generation was timed as a different
/// program, so it ranks only where the log has none of this one; its trace still replays, so a
/// log tuned before an upgrade still compiles. On a miss, the reason of the strictest query.
StatusOr<db::BestRecords> BestOfNewestVersions(RecordSource& source, const std::string& workload_key,
                                               const std::string& target, int limit,
                                               const std::string& toolkit_version, uint32_t protocol_version);

/// The warning a kernel built from `record` carries when an older code generation timed it
/// (BestOfNewestVersions fell back to it); "" otherwise.
std::string OlderCodegenWarning(const v1::TuningRecord& record);

/// Reads a local tuning database (opened read-only in spirit: nothing is written).
StatusOr<std::unique_ptr<RecordSource>> OpenLocalRecordSource(const std::string& db_path);

}  // namespace tuned::reuse

#endif  // TUNED_COMPILER_REUSE_RECORD_SOURCE_H_

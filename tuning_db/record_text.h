#ifndef TUNED_TUNING_DB_RECORD_TEXT_H_
#define TUNED_TUNING_DB_RECORD_TEXT_H_

/// \file
/// Human-readable text for what the database stores: status and state labels, and a trace as
/// one instruction per line. Used by `tuned db` and by miss reasons.

#include <string>

#include "tuned/v1/measure.pb.h"
#include "tuned/v1/task.pb.h"
#include "tuned/v1/trace.pb.h"

namespace tuned::db {

/// "ok", "compile_error", "wrong_result", … ("unspecified" for 0, "status_<n>" if unknown).
std::string MeasureStatusLabel(v1::MeasureStatus status);
/// "pending", "running", "succeeded", … ("unspecified" for 0, "state_<n>" if unknown).
std::string TaskStateLabel(v1::TaskState state);

/// The trace, one instruction per line, numbered, in the form
///   `  3: v4, v5 = split(v2, none, 32) int=[2] str=["C"]   # decision [4, 8]`
/// where `vN` are random variables, and the decision (if any) follows the instruction it
/// belongs to. Ends with a newline; an empty trace gives "(empty trace)\n".
std::string FormatTrace(const v1::Trace& trace);

}  // namespace tuned::db

#endif  // TUNED_TUNING_DB_RECORD_TEXT_H_

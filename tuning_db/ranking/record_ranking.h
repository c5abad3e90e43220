#ifndef TUNED_TUNING_DB_RANKING_RECORD_RANKING_H_
#define TUNED_TUNING_DB_RANKING_RECORD_RANKING_H_

/// \file
/// How a task's records rank: the one rule a task applies to choose its best (the same as the
/// log's best-record lookup, record_store.h, plus: a search record whose repeat CV is above the
/// noise threshold does not rank until it was re-measured). The task runner, the status page
/// and `tuned db plot` all give a task's best through it. Depends on the messages only.

#include <span>
#include <vector>

#include "tuned/v1/measure.pb.h"
#include "tuned/v1/record.pb.h"
#include "tuned/v1/task.pb.h"

namespace tuned::db {

/// Whether an OK result is too noisy to rank before it was measured again.
bool IsNoisy(const v1::MeasureResult& result, const v1::RemeasureOptions& options);

/// One record per trace, fastest first, of the task's OK records that may rank: per trace the
/// records of its latest kind; where FINAL records exist, only FINAL records; a SEARCH record
/// that is noisy (IsNoisy) does not rank. The record of a trace is its fastest such record.
std::vector<const v1::TuningRecord*> RankTraces(std::span<const v1::TuningRecord> records,
                                                const v1::RemeasureOptions& options);

}  // namespace tuned::db

#endif  // TUNED_TUNING_DB_RANKING_RECORD_RANKING_H_

#ifndef TUNED_SERVER_TASKS_REMEASURE_H_
#define TUNED_SERVER_TASKS_REMEASURE_H_

/// \file
/// What a task measures again before a figure may rank, and how a task ranks its records: the
/// defaults of `RemeasureOptions` (task.proto) and the combination of a re-measure's rounds
/// into one figure. How a task ranks its records is tuning_db/ranking/record_ranking.h.

#include <cstdint>
#include <vector>

#include "common/status.h"
#include "tuned/v1/measure.pb.h"
#include "tuned/v1/record.pb.h"
#include "tuned/v1/task.pb.h"
#include "tuning_db/ranking/record_ranking.h"

namespace tuned::tasks {

/// The defaults: noise_cv_threshold 0.05, noise_repeat_factor 3, top_k 5, top_k_rounds 4.
v1::RemeasureOptions DefaultRemeasureOptions();
/// `requested` with each absent field taken from `defaults`.
v1::RemeasureOptions WithRemeasureDefaults(const v1::RemeasureOptions& requested,
                                           const v1::RemeasureOptions& defaults);
/// InvalidArgument naming the field: a threshold that is negative or not finite, a repeat
/// factor of 0 or above 100, top_k above 100, top_k_rounds of 0 or above 100.
Status ValidateRemeasure(const v1::RemeasureOptions& options);

/// The median and the coefficient of variation (sample standard deviation over mean; 0 with
/// fewer than two) of `seconds`, as the worker computes them for one result.
double MedianOf(std::vector<double> seconds);
double CoefficientOfVariation(const std::vector<double>& seconds);

/// One figure from the rounds of an interleaved re-measure of one trace on one worker: the
/// first failed round's result when one failed, else the last round's result with every
/// round's repeats, their median and CV.
v1::MeasureResult CombineRounds(const std::vector<v1::MeasureResult>& rounds);

}  // namespace tuned::tasks

#endif  // TUNED_SERVER_TASKS_REMEASURE_H_

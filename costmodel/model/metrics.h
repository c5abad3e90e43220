#ifndef TUNED_COSTMODEL_MODEL_METRICS_H_
#define TUNED_COSTMODEL_MODEL_METRICS_H_

/// \file
/// Quality of a cost model's ranking against measured throughputs (benchmarks, tests, logs).

#include <vector>

namespace tuned::costmodel {

/// Spearman rank correlation of two equally long series (ties get their average rank);
/// 0 when either is constant or there are fewer than two values.
double SpearmanCorrelation(const std::vector<double>& truth, const std::vector<double>& predicted);

/// Of the k truly fastest candidates, the fraction found among the k best predicted
/// (ties broken by index); k is clamped to the number of candidates. 0 for empty input.
double TopKRecall(const std::vector<double>& truth, const std::vector<double>& predicted, int k);

/// Best true value among the k best predicted, divided by the best true value overall (1: the
/// model's top k contain the best candidate). 0 for empty input or a best value of 0.
double TopKPeak(const std::vector<double>& truth, const std::vector<double>& predicted, int k);

}  // namespace tuned::costmodel

#endif  // TUNED_COSTMODEL_MODEL_METRICS_H_

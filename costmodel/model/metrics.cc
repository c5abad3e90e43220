#include "costmodel/model/metrics.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "common/check.h"

namespace tuned::costmodel {
namespace {

std::vector<double> Ranks(const std::vector<double>& v) {
  std::vector<size_t> order(v.size());
  std::iota(order.begin(), order.end(), size_t(0));
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
  std::vector<double> ranks(v.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]]) ++j;
    const double average = (double(i) + double(j)) / 2.0;
    for (size_t t = i; t <= j; ++t) ranks[order[t]] = average;
    i = j + 1;
  }
  return ranks;
}

// Indices of the k largest values, ties by index.
std::vector<size_t> TopK(const std::vector<double>& v, size_t k) {
  std::vector<size_t> order(v.size());
  std::iota(order.begin(), order.end(), size_t(0));
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return v[a] > v[b]; });
  order.resize(std::min(k, order.size()));
  return order;
}

}  // namespace

double SpearmanCorrelation(const std::vector<double>& truth, const std::vector<double>& predicted) {
  TUNED_CHECK(truth.size() == predicted.size()) << "series differ in length";
  const size_t n = truth.size();
  if (n < 2) return 0;
  std::vector<double> a = Ranks(truth), b = Ranks(predicted);
  const double mean = (double(n) - 1) / 2.0;
  double cov = 0, va = 0, vb = 0;
  for (size_t i = 0; i < n; ++i) {
    cov += (a[i] - mean) * (b[i] - mean);
    va += (a[i] - mean) * (a[i] - mean);
    vb += (b[i] - mean) * (b[i] - mean);
  }
  if (va == 0 || vb == 0) return 0;
  return cov / std::sqrt(va * vb);
}

double TopKRecall(const std::vector<double>& truth, const std::vector<double>& predicted, int k) {
  TUNED_CHECK(truth.size() == predicted.size()) << "series differ in length";
  if (truth.empty() || k <= 0) return 0;
  std::vector<size_t> best = TopK(truth, size_t(k));
  std::vector<size_t> picked = TopK(predicted, size_t(k));
  int hits = 0;
  for (size_t i : best) hits += std::find(picked.begin(), picked.end(), i) != picked.end();
  return double(hits) / double(best.size());
}

double TopKPeak(const std::vector<double>& truth, const std::vector<double>& predicted, int k) {
  TUNED_CHECK(truth.size() == predicted.size()) << "series differ in length";
  if (truth.empty() || k <= 0) return 0;
  const double best = *std::max_element(truth.begin(), truth.end());
  if (!(best > 0)) return 0;
  double found = 0;
  for (size_t i : TopK(predicted, size_t(k))) found = std::max(found, truth[i]);
  return found / best;
}

}  // namespace tuned::costmodel

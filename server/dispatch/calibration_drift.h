#ifndef TUNED_SERVER_DISPATCH_CALIBRATION_DRIFT_H_
#define TUNED_SERVER_DISPATCH_CALIBRATION_DRIFT_H_

/// \file
/// Whether one worker's calibration figure moved: the rule of docs/server.md, "Drift".
///
/// A figure is compared with the worker's baseline (its first figure, later its last drifted
/// one, so a lasting change re-measures one batch, not every batch after it). A move counts as
/// a drift when it is larger than the configured threshold *and* than `kJitterMultiple` times
/// the worker's own jitter: the median relative change between consecutive calibrations over
/// the last `kJitterWindow` of them. On a steady machine the jitter is a fraction of a percent
/// and the threshold decides; on a machine whose figure jumps between two levels from batch to
/// batch (seen on shared VMs) the jumps are its noise, not a change of conditions, and do not
/// re-measure every other batch.

#include <cstddef>
#include <deque>

namespace tuned::dispatch {

class CalibrationDrift {
 public:
  /// Consecutive changes the jitter is the median of; fewer than `kMinJitterChanges` of them
  /// and the jitter is 0 (not known yet: the threshold alone decides).
  static constexpr size_t kJitterWindow = 8;
  static constexpr size_t kMinJitterChanges = 4;
  static constexpr double kJitterMultiple = 2.0;

  struct Verdict {
    double baseline_seconds = 0;  // what the figure was compared with
    double drift = 0;             // (figure - baseline) / baseline
    double band = 0;              // the largest |drift| that is not a drift
    bool first = false;           // the worker's first figure: the baseline, never a drift
    bool drifted = false;
  };

  /// `threshold`: the relative move that is a drift on a steady machine; 0 turns drift off.
  explicit CalibrationDrift(double threshold) : threshold_(threshold) {}

  /// Judges `seconds` (positive) and adds it to the history.
  Verdict Add(double seconds);

  double baseline_seconds() const { return baseline_; }
  /// The median relative change between consecutive figures (0 while fewer than
  /// kMinJitterChanges are known).
  double jitter() const;

 private:
  double threshold_;
  double baseline_ = 0;
  double last_ = 0;
  std::deque<double> changes_;  // |x[i] - x[i-1]| / x[i-1], newest last
};

}  // namespace tuned::dispatch

#endif  // TUNED_SERVER_DISPATCH_CALIBRATION_DRIFT_H_

#ifndef TUNED_OBSERVABILITY_PLOT_PLOT_H_
#define TUNED_OBSERVABILITY_PLOT_PLOT_H_

/// \file
/// Tuning-curve charts for `tuned db plot`: best-so-far GFLOP/s against trials or time, one
/// line (one SVG path) per curve, each trial a mark coloured by its measurement status, axes
/// with units and a legend. One layout, two outputs: SVG text written directly, PNG rendered by
/// cairo (when the build has it).

#include <string>
#include <vector>

#include "common/status.h"
#include "observability/curve/tuning_curve.h"

namespace tuned::observability {

enum class PlotAxis { kTrials, kSeconds };

struct PlotOptions {
  int width = 900;   // pixels
  int height = 540;  // pixels
  PlotAxis x_axis = PlotAxis::kTrials;
  std::string title;
};

/// The chart as an SVG document. InvalidArgument for no curve or a size outside [200, 8000].
StatusOr<std::string> PlotSvg(const std::vector<TuningCurve>& curves, const PlotOptions& options);

/// Writes the chart as a PNG of exactly options.width × options.height pixels to `path`.
/// FailedPrecondition when this build has no cairo.
Status PlotPng(const std::vector<TuningCurve>& curves, const PlotOptions& options,
               const std::string& path);

/// Whether PlotPng can draw (the build found cairo).
bool PngSupported();

}  // namespace tuned::observability

#endif  // TUNED_OBSERVABILITY_PLOT_PLOT_H_

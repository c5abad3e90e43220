#ifndef TUNED_OBSERVABILITY_PLOT_CANVAS_INTERNAL_H_
#define TUNED_OBSERVABILITY_PLOT_CANVAS_INTERNAL_H_

/// \file
/// Private to observability/plot: what the chart layout draws with, so SVG and PNG come from
/// one layout. Coordinates are pixels, origin top left; colours are "#rrggbb".

#include <string>
#include <utility>
#include <vector>

#include "observability/plot/plot.h"

namespace tuned::observability {

enum class TextAnchor { kStart, kMiddle, kEnd };

class Canvas {
 public:
  virtual ~Canvas() = default;
  virtual void Rect(double x, double y, double w, double h, const std::string& fill,
                    const std::string& stroke) = 0;
  virtual void Line(double x1, double y1, double x2, double y2, const std::string& color,
                    double width) = 0;
  /// One curve: a polyline through `points`.
  virtual void Curve(const std::vector<std::pair<double, double>>& points,
                     const std::string& color, double width, const std::string& name) = 0;
  virtual void Dot(double x, double y, double radius, const std::string& fill,
                   const std::string& status) = 0;
  /// `vertical`: rotated to read bottom-up (the y-axis label).
  virtual void Text(double x, double y, const std::string& text, double size, TextAnchor anchor,
                    const std::string& css_class, bool vertical = false) = 0;
};

/// InvalidArgument for no curve or a size outside [200, 8000] pixels.
Status CheckPlotInput(const std::vector<TuningCurve>& curves, const PlotOptions& options);

/// Draws the chart of `curves` on `canvas` (width × height pixels).
void DrawChart(const std::vector<TuningCurve>& curves, const PlotOptions& options, Canvas& canvas);

}  // namespace tuned::observability

#endif  // TUNED_OBSERVABILITY_PLOT_CANVAS_INTERNAL_H_

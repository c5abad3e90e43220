#ifndef TUNED_OBSERVABILITY_PLOT_SVG_CANVAS_INTERNAL_H_
#define TUNED_OBSERVABILITY_PLOT_SVG_CANVAS_INTERNAL_H_

/// \file
/// Private to observability/plot: a Canvas that writes SVG elements as text (curves are
/// `<path class="curve">`, trials `<circle class="trial" data-status=...>`).

#include <string>

#include "observability/plot/canvas_internal.h"

namespace tuned::observability {

class SvgCanvas final : public Canvas {
 public:
  SvgCanvas(int width, int height);
  void Rect(double x, double y, double w, double h, const std::string& fill,
            const std::string& stroke) override;
  void Line(double x1, double y1, double x2, double y2, const std::string& color,
            double width) override;
  void Curve(const std::vector<std::pair<double, double>>& points, const std::string& color,
             double width, const std::string& name) override;
  void Dot(double x, double y, double radius, const std::string& fill,
           const std::string& status) override;
  void Text(double x, double y, const std::string& text, double size, TextAnchor anchor,
            const std::string& css_class, bool vertical) override;
  /// The document, closed.
  std::string Finish();

 private:
  std::string body_;
};

}  // namespace tuned::observability

#endif  // TUNED_OBSERVABILITY_PLOT_SVG_CANVAS_INTERNAL_H_

// The chart layout shared by SVG and PNG: plot area, nice ticks, axes with units, one curve per
// task (best so far, a step line), every trial a dot coloured by status, and a legend.

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "observability/plot/canvas_internal.h"

namespace tuned::observability {
namespace {

constexpr const char* kPalette[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd",
                                    "#ff7f0e", "#17becf", "#8c564b", "#e377c2"};
constexpr double kLeft = 78, kRight = 24, kTop = 44, kBottom = 64;

// A tick step of 1, 2 or 5 times a power of ten giving about `ticks` intervals over `range`.
double NiceStep(double range, int ticks) {
  if (range <= 0) return 1;
  const double raw = range / ticks;
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (double factor : {1.0, 2.0, 5.0, 10.0}) {
    if (factor * power >= raw) return factor * power;
  }
  return 10 * power;
}

std::string FormatTick(double value, double step) {
  char text[32];
  if (step >= 1 || value == 0) {
    std::snprintf(text, sizeof(text), "%.0f", value);
  } else {
    const int digits = std::min(6, int(std::ceil(-std::log10(step))));
    std::snprintf(text, sizeof(text), "%.*f", digits, value);
  }
  return text;
}

std::string StatusColor(v1::MeasureStatus status) {
  switch (status) {
    case v1::MEASURE_STATUS_OK: return "";  // the curve's own colour
    case v1::MEASURE_STATUS_COMPILE_ERROR:
    case v1::MEASURE_STATUS_BUILD_TIMEOUT: return "#7f7f7f";
    case v1::MEASURE_STATUS_WRONG_RESULT: return "#bcbd22";
    default: return "#000000";  // crashes, timeouts, lost workers
  }
}

double XOf(const CurvePoint& point, PlotAxis axis) {
  return axis == PlotAxis::kTrials ? point.trial : point.seconds;
}

// Legend text: the task, plus workload and target when the curves differ in them.
std::string LegendLabel(const TuningCurve& curve, bool show_workload, bool show_target) {
  std::string label = curve.label();
  char best[48];
  std::snprintf(best, sizeof(best), " (best %.1f GFLOP/s)", curve.best_gflops);
  if (show_workload) label += " · " + curve.workload_key;
  if (show_target) label += " · " + curve.target;
  if (label.size() > 90) label = label.substr(0, 87) + "...";
  return label + best;
}

}  // namespace

void DrawChart(const std::vector<TuningCurve>& curves, const PlotOptions& options,
               Canvas& canvas) {
  const double width = options.width, height = options.height;
  bool show_workload = false, show_target = false;
  double x_max = 0, y_max = 0;
  for (const TuningCurve& curve : curves) {
    show_workload |= curve.workload_key != curves.front().workload_key;
    show_target |= curve.target != curves.front().target;
    for (const CurvePoint& point : curve.points) {
      x_max = std::max(x_max, XOf(point, options.x_axis));
      y_max = std::max(y_max, point.gflops);
    }
  }
  const double x_step = NiceStep(std::max(x_max, 1.0), 6);
  const double y_step = NiceStep(std::max(y_max, 1e-3) * 1.05, 5);
  const double x_top = std::max(std::ceil(std::max(x_max, 1.0) / x_step), 1.0) * x_step;
  const double y_top = std::max(std::ceil(std::max(y_max, 1e-3) * 1.05 / y_step), 1.0) * y_step;

  // Below the plot area: the x axis, the legend (one row per curve), then the note.
  const double legend_rows = double(curves.size());
  const double plot_bottom = height - kBottom - 18 * legend_rows - 14;
  const double plot_height = std::max(plot_bottom - kTop, 40.0);
  const double plot_width = width - kLeft - kRight;
  auto px = [&](double x) { return kLeft + x / x_top * plot_width; };
  auto py = [&](double y) { return kTop + plot_height - y / y_top * plot_height; };

  canvas.Rect(0, 0, width, height, "#ffffff", "");
  canvas.Rect(kLeft, kTop, plot_width, plot_height, "#ffffff", "#444444");
  const std::string title = !options.title.empty() ? options.title
                            : show_workload         ? "tuning curves"
                                                    : curves.front().workload_key;
  canvas.Text(width / 2, 26, title, 15, TextAnchor::kMiddle, "title");

  for (double x = 0; x <= x_top + x_step / 2; x += x_step) {
    canvas.Line(px(x), kTop, px(x), kTop + plot_height, "#e6e6e6", 1);
    canvas.Text(px(x), kTop + plot_height + 16, FormatTick(x, x_step), 11, TextAnchor::kMiddle,
                "tick");
  }
  for (double y = 0; y <= y_top + y_step / 2; y += y_step) {
    canvas.Line(kLeft, py(y), kLeft + plot_width, py(y), "#e6e6e6", 1);
    canvas.Text(kLeft - 6, py(y) + 4, FormatTick(y, y_step), 11, TextAnchor::kEnd, "tick");
  }
  canvas.Line(kLeft, kTop + plot_height, kLeft + plot_width, kTop + plot_height, "#444444", 1);
  canvas.Line(kLeft, kTop, kLeft, kTop + plot_height, "#444444", 1);
  canvas.Text(kLeft + plot_width / 2, kTop + plot_height + 36,
              options.x_axis == PlotAxis::kTrials ? "trials measured"
                                                  : "time since the first trial (s)",
              12, TextAnchor::kMiddle, "x-label");
  canvas.Text(20, kTop + plot_height / 2, "best so far (GFLOP/s)", 12, TextAnchor::kMiddle,
              "y-label", /*vertical=*/true);

  for (size_t i = 0; i < curves.size(); ++i) {
    const TuningCurve& curve = curves[i];
    const std::string color = kPalette[i % std::size(kPalette)];
    std::vector<std::pair<double, double>> line;  // a step line: best so far holds until beaten
    for (const CurvePoint& point : curve.points) {
      const double x = px(XOf(point, options.x_axis));
      if (!line.empty()) line.push_back({x, line.back().second});
      line.push_back({x, py(point.best_gflops)});
    }
    for (const CurvePoint& point : curve.points) {
      const std::string status_color = StatusColor(point.status);
      canvas.Dot(px(XOf(point, options.x_axis)), py(point.gflops),
                 status_color.empty() ? 2.2 : 2.8, status_color.empty() ? color : status_color,
                 StatusLabel(point.status));
    }
    canvas.Curve(line, color, 2, curve.label());
    const double legend_y = kTop + plot_height + 58 + 18 * double(i);
    canvas.Line(kLeft, legend_y - 4, kLeft + 22, legend_y - 4, color, 3);
    canvas.Text(kLeft + 28, legend_y, LegendLabel(curve, show_workload, show_target), 11,
                TextAnchor::kStart, "legend");
  }
  canvas.Text(width - kRight, height - 6,
              "dots: each trial's GFLOP/s; grey: build failed, black: crash/timeout/lost, "
              "olive: wrong result (at 0)",
              9, TextAnchor::kEnd, "note");
}

}  // namespace tuned::observability

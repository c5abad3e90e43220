#include "observability/plot/plot.h"

#include "observability/plot/svg_canvas_internal.h"

namespace tuned::observability {

Status CheckPlotInput(const std::vector<TuningCurve>& curves, const PlotOptions& options) {
  if (curves.empty()) return InvalidArgumentError("nothing to plot: no records");
  for (int size : {options.width, options.height}) {
    if (size < 200 || size > 8000) {
      return InvalidArgumentError("plot size " + std::to_string(options.width) + "x" +
                                  std::to_string(options.height) +
                                  " is outside [200, 8000] pixels");
    }
  }
  return Status::Ok();
}

StatusOr<std::string> PlotSvg(const std::vector<TuningCurve>& curves, const PlotOptions& options) {
  TUNED_RETURN_IF_ERROR(CheckPlotInput(curves, options));
  SvgCanvas canvas(options.width, options.height);
  DrawChart(curves, options, canvas);
  return canvas.Finish();
}

}  // namespace tuned::observability

// PNG output: the chart layout drawn by cairo on an image surface (built only with cairo).

#include <cairo.h>

#include <memory>

#include "observability/plot/canvas_internal.h"

namespace tuned::observability {
namespace {

void SetColor(cairo_t* cr, const std::string& hex, double alpha = 1) {
  unsigned rgb = 0;
  if (hex.size() == 7) rgb = unsigned(std::stoul(hex.substr(1), nullptr, 16));
  cairo_set_source_rgba(cr, ((rgb >> 16) & 255) / 255.0, ((rgb >> 8) & 255) / 255.0,
                        (rgb & 255) / 255.0, alpha);
}

class CairoCanvas final : public Canvas {
 public:
  explicit CairoCanvas(cairo_t* cr) : cr_(cr) {
    cairo_select_font_face(cr_, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  }
  void Rect(double x, double y, double w, double h, const std::string& fill,
            const std::string& stroke) override {
    cairo_rectangle(cr_, x, y, w, h);
    if (!fill.empty()) {
      SetColor(cr_, fill);
      cairo_fill_preserve(cr_);
    }
    if (!stroke.empty()) {
      SetColor(cr_, stroke);
      cairo_set_line_width(cr_, 1);
      cairo_stroke_preserve(cr_);
    }
    cairo_new_path(cr_);
  }
  void Line(double x1, double y1, double x2, double y2, const std::string& color,
            double width) override {
    SetColor(cr_, color);
    cairo_set_line_width(cr_, width);
    cairo_move_to(cr_, x1, y1);
    cairo_line_to(cr_, x2, y2);
    cairo_stroke(cr_);
  }
  void Curve(const std::vector<std::pair<double, double>>& points, const std::string& color,
             double width, const std::string&) override {
    if (points.empty()) return;
    SetColor(cr_, color);
    cairo_set_line_width(cr_, width);
    cairo_move_to(cr_, points.front().first, points.front().second);
    for (const auto& [x, y] : points) cairo_line_to(cr_, x, y);
    cairo_stroke(cr_);
  }
  void Dot(double x, double y, double radius, const std::string& fill,
           const std::string&) override {
    SetColor(cr_, fill, 0.55);
    cairo_arc(cr_, x, y, radius, 0, 6.283185307179586);
    cairo_fill(cr_);
  }
  void Text(double x, double y, const std::string& text, double size, TextAnchor anchor,
            const std::string&, bool vertical) override {
    cairo_save(cr_);
    cairo_set_font_size(cr_, size);
    cairo_text_extents_t extents;
    cairo_text_extents(cr_, text.c_str(), &extents);
    const double shift = anchor == TextAnchor::kStart    ? 0
                         : anchor == TextAnchor::kMiddle ? extents.x_advance / 2
                                                         : extents.x_advance;
    cairo_translate(cr_, x, y);
    if (vertical) cairo_rotate(cr_, -1.5707963267948966);
    SetColor(cr_, "#222222");
    cairo_move_to(cr_, -shift, 0);
    cairo_show_text(cr_, text.c_str());
    cairo_restore(cr_);
  }

 private:
  cairo_t* cr_;
};

}  // namespace

bool PngSupported() { return true; }

Status PlotPng(const std::vector<TuningCurve>& curves, const PlotOptions& options,
               const std::string& path) {
  TUNED_RETURN_IF_ERROR(CheckPlotInput(curves, options));
  std::unique_ptr<cairo_surface_t, void (*)(cairo_surface_t*)> surface(
      cairo_image_surface_create(CAIRO_FORMAT_ARGB32, options.width, options.height),
      cairo_surface_destroy);
  std::unique_ptr<cairo_t, void (*)(cairo_t*)> cr(cairo_create(surface.get()), cairo_destroy);
  CairoCanvas canvas(cr.get());
  DrawChart(curves, options, canvas);
  cairo_surface_flush(surface.get());
  const cairo_status_t written = cairo_surface_write_to_png(surface.get(), path.c_str());
  if (written != CAIRO_STATUS_SUCCESS) {
    return InvalidArgumentError("cannot write '" + path + "': " + cairo_status_to_string(written));
  }
  return Status::Ok();
}

}  // namespace tuned::observability

#include "observability/plot/svg_canvas_internal.h"

#include <cstdio>

namespace tuned::observability {
namespace {

std::string Num(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f", value);
  return text;
}

std::string Escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace

SvgCanvas::SvgCanvas(int width, int height) {
  body_ = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(width) +
          "\" height=\"" + std::to_string(height) + "\" viewBox=\"0 0 " + std::to_string(width) +
          " " + std::to_string(height) +
          "\" font-family=\"DejaVu Sans, Liberation Sans, sans-serif\">\n";
}

void SvgCanvas::Rect(double x, double y, double w, double h, const std::string& fill,
                     const std::string& stroke) {
  body_ += "<rect x=\"" + Num(x) + "\" y=\"" + Num(y) + "\" width=\"" + Num(w) + "\" height=\"" +
           Num(h) + "\" fill=\"" + (fill.empty() ? "none" : fill) + "\"" +
           (stroke.empty() ? "" : " stroke=\"" + stroke + "\"") + "/>\n";
}

void SvgCanvas::Line(double x1, double y1, double x2, double y2, const std::string& color,
                     double width) {
  body_ += "<line x1=\"" + Num(x1) + "\" y1=\"" + Num(y1) + "\" x2=\"" + Num(x2) + "\" y2=\"" +
           Num(y2) + "\" stroke=\"" + color + "\" stroke-width=\"" + Num(width) + "\"/>\n";
}

void SvgCanvas::Curve(const std::vector<std::pair<double, double>>& points,
                      const std::string& color, double width, const std::string& name) {
  std::string d;
  for (const auto& [x, y] : points) d += (d.empty() ? "M" : " L") + Num(x) + " " + Num(y);
  body_ += "<path class=\"curve\" data-curve=\"" + Escape(name) + "\" d=\"" + d +
           "\" fill=\"none\" stroke=\"" + color + "\" stroke-width=\"" + Num(width) + "\"/>\n";
}

void SvgCanvas::Dot(double x, double y, double radius, const std::string& fill,
                    const std::string& status) {
  body_ += "<circle class=\"trial\" data-status=\"" + Escape(status) + "\" cx=\"" + Num(x) +
           "\" cy=\"" + Num(y) + "\" r=\"" + Num(radius) + "\" fill=\"" + fill +
           "\" fill-opacity=\"0.55\"/>\n";
}

void SvgCanvas::Text(double x, double y, const std::string& text, double size, TextAnchor anchor,
                     const std::string& css_class, bool vertical) {
  const char* anchor_name = anchor == TextAnchor::kStart ? "start"
                            : anchor == TextAnchor::kMiddle ? "middle"
                                                            : "end";
  body_ += "<text class=\"" + css_class + "\" x=\"" + Num(x) + "\" y=\"" + Num(y) +
           "\" font-size=\"" + Num(size) + "\" text-anchor=\"" + anchor_name + "\"" +
           (vertical ? " transform=\"rotate(-90 " + Num(x) + " " + Num(y) + ")\"" : "") + ">" +
           Escape(text) + "</text>\n";
}

std::string SvgCanvas::Finish() { return body_ + "</svg>\n"; }

}  // namespace tuned::observability

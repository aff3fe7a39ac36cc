#include "bench/svg_chart.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace onepass::bench {
namespace {

constexpr double kWidth = 560, kHeight = 320;
constexpr double kLeft = 64, kRight = 150, kTop = 36, kBottom = 48;
constexpr const char* kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                   "#9467bd", "#8c564b", "#e377c2", "#17becf"};

std::string number(double v) {
  if (v == 0) return "0";
  if (std::fabs(v) >= 100) return fmt::format("{:.0f}", v);
  if (std::fabs(v) >= 1) return fmt::format("{:.3g}", v);
  return fmt::format("{:.2g}", v);
}

}  // namespace

std::string html_escape(const std::string& text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

double nice_step(double max_value, int ticks) {
  if (!(max_value > 0)) return 1;
  const double raw = max_value / ticks;
  const double magnitude = std::pow(10, std::floor(std::log10(raw)));
  for (const double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * magnitude >= raw) return m * magnitude;
  }
  return 10 * magnitude;
}

std::string render_svg(const Chart& chart) {
  double y_max = 0;
  for (const auto& s : chart.series) {
    for (const auto& y : s.y) {
      if (y) y_max = std::max(y_max, *y);
    }
  }
  const double step = nice_step(y_max * 1.05, 5);
  const double top = std::max(step, std::ceil(y_max * 1.05 / step) * step);
  const double plot_w = kWidth - kLeft - kRight, plot_h = kHeight - kTop - kBottom;
  const std::size_t n = chart.x_ticks.size();
  auto x_at = [&](std::size_t i) {
    return kLeft +
           (n <= 1 ? plot_w / 2 : plot_w * static_cast<double>(i) / static_cast<double>(n - 1));
  };
  auto y_at = [&](double v) { return kTop + plot_h * (1 - v / top); };

  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" "
      "font-family=\"sans-serif\" font-size=\"11\">\n",
      kWidth, kHeight, kWidth, kHeight);
  svg += fmt::format("<text x=\"{}\" y=\"18\" font-size=\"13\" font-weight=\"bold\">{}</text>\n",
                     kLeft, html_escape(chart.title));
  for (double v = 0; v <= top + step / 2; v += step) {
    svg += fmt::format(
        "<line x1=\"{}\" x2=\"{}\" y1=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#ddd\"/>"
        "<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n",
        kLeft, kLeft + plot_w, y_at(v), y_at(v), kLeft - 6, y_at(v) + 4, number(v));
  }
  for (std::size_t i = 0; i < n; ++i) {
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", x_at(i),
                       kTop + plot_h + 16, html_escape(chart.x_ticks[i]));
  }
  svg += fmt::format("<line x1=\"{}\" x2=\"{}\" y1=\"{}\" y2=\"{}\" stroke=\"#333\"/>\n", kLeft,
                     kLeft + plot_w, kTop + plot_h, kTop + plot_h);
  svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
                     kLeft + plot_w / 2, kHeight - 8, html_escape(chart.x_label));
  svg += fmt::format(
      "<text transform=\"translate(14,{:.1f}) rotate(-90)\" text-anchor=\"middle\">"
      "{}</text>\n",
      kTop + plot_h / 2, html_escape(chart.y_label));
  for (std::size_t s = 0; s < chart.series.size(); ++s) {
    const auto& series = chart.series[s];
    const char* color = kColors[s % std::size(kColors)];
    std::string points;
    for (std::size_t i = 0; i < n && i < series.y.size(); ++i) {
      if (!series.y[i]) continue;
      points += fmt::format("{:.1f},{:.1f} ", x_at(i), y_at(*series.y[i]));
      svg += fmt::format(
          "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\">"
          "<title>{}: {}</title></circle>\n",
          x_at(i), y_at(*series.y[i]), color, html_escape(series.name), number(*series.y[i]));
    }
    svg +=
        fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"2\"{} points=\"{}\"/>\n",
                    color, series.dashed ? " stroke-dasharray=\"5,3\"" : "", points);
    const double ly = kTop + 8 + 16 * static_cast<double>(s);
    svg += fmt::format(
        "<line x1=\"{}\" x2=\"{}\" y1=\"{}\" y2=\"{}\" stroke=\"{}\" "
        "stroke-width=\"2\"{}/><text x=\"{}\" y=\"{}\">{}</text>\n",
        kLeft + plot_w + 10, kLeft + plot_w + 28, ly, ly, color,
        series.dashed ? " stroke-dasharray=\"5,3\"" : "", kLeft + plot_w + 32, ly + 4,
        html_escape(series.name));
  }
  svg += "</svg>\n";
  return svg;
}

}  // namespace onepass::bench

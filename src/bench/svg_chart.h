// Minimal inline-SVG line charts for the HTML report: categorical x axis (the sweep's values,
// evenly spaced), linear y axis from 0, one coloured series per endpoint. No scripts, no fonts
// to fetch: the page opens offline.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace onepass::bench {

struct ChartSeries {
  std::string name;
  std::vector<std::optional<double>> y;  // one per x tick; empty where the run is missing
  bool dashed = false;
};

struct Chart {
  std::string title, x_label, y_label;
  std::vector<std::string> x_ticks;
  std::vector<ChartSeries> series;
};

std::string render_svg(const Chart& chart);
std::string html_escape(const std::string& text);
// A readable upper bound for a y axis and its tick step: 1, 2 or 5 times a power of ten.
double nice_step(double max_value, int ticks);

}  // namespace onepass::bench

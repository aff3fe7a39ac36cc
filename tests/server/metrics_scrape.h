// Reading samples back from the server's /metrics page (Prometheus text format).
#pragma once

#include <cstdlib>
#include <sstream>
#include <string>

namespace onepass::testing {

// Sum of every sample of metric `name` (exactly that name, any labels) whose label set holds
// `label_filter` (e.g. status="429"; empty: every sample).
inline double metric_sum(const std::string& page, const std::string& name,
                         const std::string& label_filter = {}) {
  std::istringstream lines(page);
  std::string line;
  double sum = 0;
  while (std::getline(lines, line)) {
    if (line.compare(0, name.size(), name) != 0 || line.size() <= name.size()) continue;
    const char next = line[name.size()];
    if (next != ' ' && next != '{') continue;
    const auto space = line.rfind(' ');
    if (!label_filter.empty() && line.substr(0, space).find(label_filter) == std::string::npos)
      continue;
    sum += std::strtod(line.c_str() + space + 1, nullptr);
  }
  return sum;
}

}  // namespace onepass::testing

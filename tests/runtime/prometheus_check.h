// A checker for the Prometheus text exposition format, strict in the ways `promtool check
// metrics` is: every sample belongs to a family announced by HELP and TYPE lines, names and
// labels are well formed, label values properly escaped, histograms have cumulative buckets
// ending at le="+Inf" equal to _count, and a _sum. Returns the problems found (empty: valid).
#pragma once

#include <map>
#include <string>
#include <vector>

namespace onepass::runtime::testing {

struct Sample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;
};

std::vector<std::string> check_prometheus_text(const std::string& text,
                                               std::vector<Sample>* samples = nullptr);

// The value of the sample `name` whose labels include all of `labels`; NaN when absent.
double sample_value(const std::vector<Sample>& samples, const std::string& name,
                    const std::map<std::string, std::string>& labels = {});

}  // namespace onepass::runtime::testing

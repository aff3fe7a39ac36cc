// The long-input tests' oracle for combined windows (docs/api.md "Long inputs"): the
// token-weighted mean of per-window vectors, computed in double, independently of
// runtime/windows.cpp.
#pragma once

#include <cstddef>
#include <vector>

namespace onepass::testing {

inline std::vector<float> token_weighted_mean(const std::vector<std::vector<float>>& values,
                                              const std::vector<std::size_t>& tokens) {
  std::vector<double> sum(values.front().size(), 0.0);
  double weight = 0;
  for (std::size_t w = 0; w < values.size(); ++w) {
    for (std::size_t i = 0; i < sum.size(); ++i) sum[i] += double(tokens[w]) * values[w][i];
    weight += double(tokens[w]);
  }
  std::vector<float> out;
  for (double s : sum) out.push_back(static_cast<float>(s / weight));
  return out;
}

}  // namespace onepass::testing

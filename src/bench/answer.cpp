#include "bench/answer.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "base/error.h"

namespace onepass::bench {

bool same_label(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

namespace {

bool close(double got, double expected, double tolerance) {
  return std::fabs(got - expected) <= tolerance * std::max(1.0, std::fabs(expected));
}

}  // namespace

bool same_answer(const Answer& got, const Answer& expected, double tolerance) {
  if (!same_label(got.label, expected.label)) return false;
  if (!close(got.score, expected.score, tolerance)) return false;
  if (got.values.size() != expected.values.size()) return false;
  for (std::size_t i = 0; i < got.values.size(); ++i) {
    if (!close(got.values[i], expected.values[i], tolerance)) return false;
  }
  return true;
}

bool answers_agree(const Answer& a, const Answer& b, double tolerance) {
  if (!a.label.empty() || !b.label.empty()) return same_label(a.label, b.label);
  if (a.values.size() != b.values.size() || a.values.empty()) return false;
  double dot = 0, na = 0, nb = 0;
  for (std::size_t i = 0; i < a.values.size(); ++i) {
    dot += static_cast<double>(a.values[i]) * b.values[i];
    na += static_cast<double>(a.values[i]) * a.values[i];
    nb += static_cast<double>(b.values[i]) * b.values[i];
  }
  if (na == 0 || nb == 0) return na == nb;
  return dot / std::sqrt(na * nb) >= 1.0 - tolerance;
}

}  // namespace onepass::bench

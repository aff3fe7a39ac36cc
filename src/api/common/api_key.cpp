#include "api/common/api_key.h"

#include <cstddef>

namespace onepass::api {

namespace {

// Compares every byte whatever the lengths, so the time taken says nothing about the key.
bool constant_time_equal(std::string_view given, std::string_view expected) {
  unsigned char diff = given.size() == expected.size() ? 0 : 1;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const unsigned char g = i < given.size() ? static_cast<unsigned char>(given[i]) : 0;
    diff |= static_cast<unsigned char>(g ^ static_cast<unsigned char>(expected[i]));
  }
  return diff == 0;
}

}  // namespace

bool bearer_matches(std::string_view authorization, std::string_view key) {
  constexpr std::string_view kBearer = "Bearer ";
  if (authorization.size() < kBearer.size()) return false;
  for (std::size_t i = 0; i < kBearer.size(); ++i) {
    char c = authorization[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    char e = kBearer[i];
    if (e >= 'A' && e <= 'Z') e = static_cast<char>(e - 'A' + 'a');
    if (c != e) return false;
  }
  authorization.remove_prefix(kBearer.size());
  return constant_time_equal(authorization, key);
}

}  // namespace onepass::api

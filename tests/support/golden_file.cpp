#include "tests/support/golden_file.h"

#include <fstream>
#include <stdexcept>

#include "tests/support/paths.h"

namespace onepass::testing {
namespace {

nlohmann::json read_fixture_json(const std::string& fixture, const std::string& file) {
  const std::string path = fixture_model(fixture) + "/" + file;
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  return nlohmann::json::parse(in);
}

}  // namespace

nlohmann::json read_golden(const std::string& fixture) {
  return read_fixture_json(fixture, "golden.json");
}

nlohmann::json read_golden(const std::string& fixture, const std::string& file) {
  return read_fixture_json(fixture, file);
}

nlohmann::json read_fill_mask_golden(const std::string& fixture) {
  return read_fixture_json(fixture, "fill_mask_golden.json");
}

}  // namespace onepass::testing

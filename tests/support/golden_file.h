// The fixtures' golden files as JSON: golden.json (the reference implementation's outputs for
// every case) and fill_mask_golden.json (transformers' FillMaskPipeline answers), read the one way
// every test reads them. A missing or unreadable file throws, naming it, rather than parsing as
// nothing.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace onepass::testing {

// tests/data/fixtures/models/<fixture>/golden.json.
nlohmann::json read_golden(const std::string& fixture);

// tests/data/fixtures/models/<fixture>/<file>: another golden file a fixture holds.
nlohmann::json read_golden(const std::string& fixture, const std::string& file);

// tests/data/fixtures/models/<fixture>/fill_mask_golden.json.
nlohmann::json read_fill_mask_golden(const std::string& fixture);

}  // namespace onepass::testing

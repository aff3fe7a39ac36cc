// Where a test finds the fixture models and this build's `onepass` binary: the test data folder
// and the build folder are compiled into tests/support (ONEPASS_TEST_DATA_DIR and
// ONEPASS_BINARY_DIR, as onepass_add_test gives every test binary).
#pragma once

#include <string>

namespace onepass::testing {

// tests/data/fixtures/models/<name>.
std::string fixture_model(const std::string& name);

// apps/onepass/onepass in the build folder.
std::string onepass_binary();

}  // namespace onepass::testing

#include "tests/support/paths.h"

namespace onepass::testing {

std::string fixture_model(const std::string& name) {
  return std::string(ONEPASS_TEST_DATA_DIR) + "/fixtures/models/" + name;
}

std::string onepass_binary() { return std::string(ONEPASS_BINARY_DIR) + "/apps/onepass/onepass"; }

}  // namespace onepass::testing

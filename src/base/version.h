// The version of onepass, as CMakeLists.txt's project(VERSION) says it: the one place
// `onepass --version`, `onepass info` and the API's server metadata (TEI /info, KServe v2) read it.
#pragma once

#include <string_view>

namespace onepass {

// "MAJOR.MINOR.PATCH".
std::string_view version();

}  // namespace onepass

#include "base/version.h"

// ONEPASS_VERSION is defined for this file alone (src/base/CMakeLists.txt), so that a new
// version recompiles one file rather than every file that links onepass_base.
#ifndef ONEPASS_VERSION
#error "ONEPASS_VERSION must be defined from project(VERSION)"
#endif

namespace onepass {

std::string_view version() { return ONEPASS_VERSION; }

}  // namespace onepass

#include "tests/support/temp_dir.h"

#include <unistd.h>

#include <atomic>
#include <system_error>

namespace onepass::testing {

TempDir::TempDir(const std::string& tag) {
  static std::atomic<int> counter{0};
  path_ = std::filesystem::temp_directory_path() /
          ("onepass_" + tag + "_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
  std::filesystem::remove_all(path_);
  std::filesystem::create_directories(path_);
}

TempDir::~TempDir() {
  std::error_code ec;  // a destructor does not throw; a folder left behind is only litter
  std::filesystem::remove_all(path_, ec);
}

}  // namespace onepass::testing

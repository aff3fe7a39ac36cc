// A fresh folder under the system's temporary directory for one test, removed with everything in
// it when the test is done with it.
#pragma once

#include <filesystem>
#include <string>

namespace onepass::testing {

class TempDir {
 public:
  // Named onepass_<tag>_<pid>_<n>, n counting this process's folders; a leftover folder of that
  // name (a killed run of the same pid) is emptied first.
  explicit TempDir(const std::string& tag = "test");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace onepass::testing

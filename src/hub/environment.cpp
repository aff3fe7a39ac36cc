#include "hub/environment.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "base/read_file.h"

namespace onepass::hub {
namespace {

// A Hub token is a few dozen characters.
constexpr std::size_t kTokenFileLimitBytes = 4096;

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? std::string() : std::string(value);
}

bool env_true(const char* name) {
  std::string value = env(name);
  std::transform(value.begin(), value.end(), value.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return value == "1" || value == "ON" || value == "YES" || value == "TRUE";
}

std::string trim(std::string s) {
  const auto not_space = [](unsigned char c) { return !std::isspace(c); };
  s.erase(s.begin(), std::find_if(s.begin(), s.end(), not_space));
  s.erase(std::find_if(s.rbegin(), s.rend(), not_space).base(), s.end());
  return s;
}

}  // namespace

Environment Environment::from_process() {
  Environment out;
  if (std::string endpoint = env("HF_ENDPOINT"); !endpoint.empty()) {
    while (!endpoint.empty() && endpoint.back() == '/') endpoint.pop_back();
    out.endpoint = endpoint;
  }
  std::filesystem::path home = env("HF_HOME");
  if (home.empty()) {
    std::filesystem::path xdg = env("XDG_CACHE_HOME");
    if (xdg.empty()) xdg = std::filesystem::path(env("HOME")) / ".cache";
    home = xdg / "huggingface";
  }
  out.cache_dir = env("HF_HUB_CACHE");
  if (out.cache_dir.empty()) out.cache_dir = env("HUGGINGFACE_HUB_CACHE");  // the older name
  if (out.cache_dir.empty()) out.cache_dir = home / "hub";
  out.token = trim(env("HF_TOKEN"));
  if (out.token.empty()) {
    std::filesystem::path token_path = env("HF_TOKEN_PATH");
    if (token_path.empty()) token_path = home / "token";
    if (const auto text = read_file_if_present(token_path, kTokenFileLimitBytes))
      out.token = trim(*text);
  }
  out.offline = env_true("HF_HUB_OFFLINE");
  out.progress = !env_true("HF_HUB_DISABLE_PROGRESS_BARS");
  return out;
}

}  // namespace onepass::hub

#include "aws/shared_config.h"

#include <cstdlib>

#include "base/read_file.h"

namespace onepass::aws {
namespace {

// The shared files hold a few profiles; anything near this size is not one.
constexpr std::size_t kSharedFileLimitBytes = 1 << 20;

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

std::filesystem::path home_file(const Getenv& getenv, const char* variable, const char* name) {
  if (std::string path = getenv(variable); !path.empty()) {
    if (path.rfind("~/", 0) == 0) return std::filesystem::path(getenv("HOME")) / path.substr(2);
    return path;
  }
  return std::filesystem::path(getenv("HOME")) / ".aws" / name;
}

IniSections read_ini(const std::filesystem::path& path) {
  const auto text = read_file_if_present(path, kSharedFileLimitBytes);
  return text ? parse_ini(*text) : IniSections{};
}

}  // namespace

Getenv process_environment() {
  return [](const std::string& name) {
    const char* value = std::getenv(name.c_str());
    return value == nullptr ? std::string() : std::string(value);
  };
}

IniSections parse_ini(std::string_view text) {
  IniSections sections;
  std::map<std::string, std::string>* current = nullptr;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view raw = text.substr(start, end - start);
    start = end + 1;
    const bool indented = !raw.empty() && (raw.front() == ' ' || raw.front() == '\t');
    const std::string_view line = trim(raw);
    if (line.empty() || line.front() == '#' || line.front() == ';') continue;
    if (line.front() == '[') {
      const std::size_t close = line.find(']');
      if (close == std::string_view::npos) {
        current = nullptr;
        continue;
      }
      current = &sections[std::string(trim(line.substr(1, close - 1)))];
      continue;
    }
    if (current == nullptr || indented) continue;
    const std::size_t eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    std::string_view value = trim(line.substr(eq + 1));
    // An inline comment needs a space before it: '#' may be part of a secret.
    for (const std::string_view marker : {" #", " ;", "\t#", "\t;"}) {
      const std::size_t at = value.find(marker);
      if (at != std::string_view::npos) value = trim(value.substr(0, at));
    }
    (*current)[std::string(trim(line.substr(0, eq)))] = std::string(value);
  }
  return sections;
}

SharedConfig SharedConfig::load(const Getenv& getenv) {
  SharedConfig out;
  out.credentials_path = home_file(getenv, "AWS_SHARED_CREDENTIALS_FILE", "credentials");
  out.config_path = home_file(getenv, "AWS_CONFIG_FILE", "config");
  out.credentials_ = read_ini(out.credentials_path);
  for (auto& [name, values] : read_ini(out.config_path)) {
    constexpr std::string_view kPrefix = "profile ";
    if (name == "default") {
      // "[profile default]" wins over "[default]" when both exist.
      out.config_.try_emplace("default", values);
    } else if (name.rfind(kPrefix, 0) == 0) {
      out.config_[std::string(trim(std::string_view(name).substr(kPrefix.size())))] = values;
    }
  }
  return out;
}

std::optional<std::string> SharedConfig::get(const std::string& profile,
                                             const std::string& key) const {
  for (const IniSections* file : {&credentials_, &config_}) {
    const auto section = file->find(profile);
    if (section == file->end()) continue;
    const auto value = section->second.find(key);
    if (value != section->second.end()) return value->second;
  }
  return std::nullopt;
}

bool SharedConfig::has_profile(const std::string& profile) const {
  return credentials_.count(profile) > 0 || config_.count(profile) > 0;
}

std::string profile_name(const Getenv& getenv, const std::string& explicit_profile) {
  if (!explicit_profile.empty()) return explicit_profile;
  if (std::string profile = getenv("AWS_PROFILE"); !profile.empty()) return profile;
  return "default";
}

}  // namespace onepass::aws

// The AWS shared files as the SDKs read them: ~/.aws/credentials ("[NAME]" sections) and
// ~/.aws/config ("[default]" and "[profile NAME]"), their locations overridable through
// AWS_SHARED_CREDENTIALS_FILE and AWS_CONFIG_FILE. A key in the credentials file wins over the
// same key in the config file's profile. Also the process environment as a lookup function, so
// that every credential source can be tested with an environment of the test's own.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace onepass::aws {

// Returns a variable's value, "" when it is unset.
using Getenv = std::function<std::string(const std::string& name)>;
Getenv process_environment();

using IniSections = std::map<std::string, std::map<std::string, std::string>>;
// "[section]" headers and "key = value" lines; '#' and ';' start comments; names and keys are
// trimmed, keys kept as written (the SDKs match them case-sensitively). Indented lines (nested
// sub-properties such as s3's) are skipped.
IniSections parse_ini(std::string_view text);

class SharedConfig {
 public:
  // Reads both files (a missing file is an empty one).
  static SharedConfig load(const Getenv& getenv);

  // A key of `profile`, looked up in the credentials file then in the config file.
  std::optional<std::string> get(const std::string& profile, const std::string& key) const;
  bool has_profile(const std::string& profile) const;

  std::filesystem::path credentials_path, config_path;

 private:
  IniSections credentials_, config_;  // config_ keyed by bare profile names
};

// AWS_PROFILE, then "default".
std::string profile_name(const Getenv& getenv, const std::string& explicit_profile);

}  // namespace onepass::aws

// AWS credentials as a value. The secret and the session token never leave this struct except
// into a signature: describe() and every message name only the key id's last characters and the
// source they came from.
#pragma once

#include <chrono>
#include <optional>
#include <string>

namespace onepass::aws {

using WallClock = std::chrono::system_clock;

struct Credentials {
  std::string access_key_id;
  std::string secret_access_key;
  std::string session_token;                        // empty for long-term keys
  std::optional<WallClock::time_point> expiration;  // temporary credentials only
  std::string source;  // where they came from, e.g. "environment", "profile dev"

  bool empty() const { return access_key_id.empty() || secret_access_key.empty(); }
  // "key ...WXYZ from profile dev, expires 2026-12-07T14:00:00Z": safe to print.
  std::string describe() const;
};

// "2015-08-30T12:36:00Z" (and with fractional seconds or a +00:00 offset, as STS, ECS and IMDS
// write it) to a time point; nullopt when it is not such a timestamp.
std::optional<WallClock::time_point> parse_iso8601(const std::string& text);
std::string format_iso8601(WallClock::time_point time);

}  // namespace onepass::aws

#include "aws/credentials.h"

#include <cstdio>
#include <ctime>

namespace onepass::aws {

std::string Credentials::describe() const {
  std::string out =
      "key ..." + (access_key_id.size() >= 4 ? access_key_id.substr(access_key_id.size() - 4)
                                             : std::string("?"));
  if (!source.empty()) out += " from " + source;
  if (expiration) out += ", expires " + format_iso8601(*expiration);
  return out;
}

std::optional<WallClock::time_point> parse_iso8601(const std::string& text) {
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0, used = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &year, &month, &day, &hour, &minute,
                  &second, &used) != 6) {
    return std::nullopt;
  }
  std::size_t rest = static_cast<std::size_t>(used);
  if (rest < text.size() && text[rest] == '.') {  // fractional seconds: dropped
    ++rest;
    while (rest < text.size() && text[rest] >= '0' && text[rest] <= '9') ++rest;
  }
  const std::string zone = text.substr(rest);
  if (zone != "Z" && zone != "+00:00" && zone != "") return std::nullopt;
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60)
    return std::nullopt;
  std::tm tm{};
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = minute;
  tm.tm_sec = second;
  return WallClock::from_time_t(::timegm(&tm));
}

std::string format_iso8601(WallClock::time_point time) {
  const std::time_t t = WallClock::to_time_t(time);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char out[32];
  std::strftime(out, sizeof out, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return out;
}

}  // namespace onepass::aws

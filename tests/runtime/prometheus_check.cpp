#include "prometheus_check.h"

#include <cctype>
#include <cmath>
#include <limits>
#include <set>
#include <sstream>

namespace onepass::runtime::testing {
namespace {

bool valid_name(const std::string& name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != ':') return false;
  }
  return true;
}

bool parse_value(const std::string& text, double& value) {
  if (text == "+Inf") return value = std::numeric_limits<double>::infinity(), true;
  if (text == "-Inf") return value = -std::numeric_limits<double>::infinity(), true;
  if (text == "NaN") return value = std::numeric_limits<double>::quiet_NaN(), true;
  try {
    std::size_t used = 0;
    value = std::stod(text, &used);
    return used == text.size();
  } catch (...) {
    return false;
  }
}

// Parses `name{a="x",b="y"} value`; returns an error or "".
std::string parse_sample(const std::string& line, Sample& s) {
  std::size_t i = 0;
  while (i < line.size() && line[i] != '{' && line[i] != ' ') ++i;
  s.name = line.substr(0, i);
  if (!valid_name(s.name)) return "bad metric name in: " + line;
  if (i < line.size() && line[i] == '{') {
    ++i;
    while (i < line.size() && line[i] != '}') {
      std::size_t eq = line.find('=', i);
      if (eq == std::string::npos) return "label without '=' in: " + line;
      std::string label = line.substr(i, eq - i);
      if (!valid_name(label) || label.find(':') != std::string::npos) {
        return "bad label name in: " + line;
      }
      if (eq + 1 >= line.size() || line[eq + 1] != '"') return "unquoted label in: " + line;
      std::string value;
      std::size_t j = eq + 2;
      for (; j < line.size() && line[j] != '"'; ++j) {
        if (line[j] == '\\') {
          if (j + 1 >= line.size()) return "dangling escape in: " + line;
          char e = line[++j];
          if (e == 'n') {
            value += '\n';
          } else if (e == '\\' || e == '"') {
            value += e;
          } else {
            return "bad escape in: " + line;
          }
        } else {
          value += line[j];
        }
      }
      if (j >= line.size()) return "unterminated label value in: " + line;
      if (s.labels.count(label)) return "duplicate label in: " + line;
      s.labels[label] = value;
      i = j + 1;
      if (i < line.size() && line[i] == ',') ++i;
    }
    if (i >= line.size()) return "unterminated label set in: " + line;
    ++i;
  }
  if (i >= line.size() || line[i] != ' ') return "no value in: " + line;
  if (!parse_value(line.substr(i + 1), s.value)) return "bad value in: " + line;
  return "";
}

std::string family_of(const std::string& name, const std::map<std::string, std::string>& types) {
  if (types.count(name)) return name;
  for (const char* suffix : {"_bucket", "_sum", "_count"}) {
    const std::string sfx = suffix;
    if (name.size() > sfx.size() && name.compare(name.size() - sfx.size(), sfx.size(), sfx) == 0) {
      std::string base = name.substr(0, name.size() - sfx.size());
      auto it = types.find(base);
      if (it != types.end() && it->second == "histogram") return base;
    }
  }
  return "";
}

}  // namespace

std::vector<std::string> check_prometheus_text(const std::string& text,
                                               std::vector<Sample>* samples_out) {
  std::vector<std::string> problems;
  std::map<std::string, std::string> types;
  std::set<std::string> helps, seen_series, finished_families;
  std::vector<Sample> samples;
  std::string current_family;
  if (!text.empty() && text.back() != '\n') problems.push_back("text does not end in a newline");
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    if (line.rfind("# HELP ", 0) == 0 || line.rfind("# TYPE ", 0) == 0) {
      std::istringstream words(line.substr(7));
      std::string name, rest;
      words >> name >> rest;
      if (!valid_name(name)) problems.push_back("bad name in: " + line);
      if (line[2] == 'H') {
        if (!helps.insert(name).second) problems.push_back("second HELP for " + name);
      } else {
        static const std::set<std::string> kinds = {"counter", "gauge", "histogram", "summary",
                                                    "untyped"};
        if (!kinds.count(rest)) problems.push_back("bad TYPE in: " + line);
        if (types.count(name)) problems.push_back("second TYPE for " + name);
        types[name] = rest;
        if (rest == "counter" && name.size() < 6) problems.push_back("short counter " + name);
        if (rest == "counter" && name.compare(name.size() - 6, 6, "_total") != 0) {
          problems.push_back("counter without _total: " + name);
        }
      }
      if (!current_family.empty() && current_family != name) {
        finished_families.insert(current_family);
      }
      current_family = name;
      continue;
    }
    if (line[0] == '#') continue;
    Sample s;
    std::string error = parse_sample(line, s);
    if (!error.empty()) {
      problems.push_back(error);
      continue;
    }
    const std::string family = family_of(s.name, types);
    if (family.empty()) {
      problems.push_back("sample without TYPE: " + s.name);
    } else {
      if (!helps.count(family)) problems.push_back("family without HELP: " + family);
      if (family != current_family || finished_families.count(family)) {
        problems.push_back("sample outside its family's block: " + line);
      }
    }
    std::ostringstream key;
    key << s.name;
    for (auto& [k, v] : s.labels) key << '|' << k << '=' << v;
    if (!seen_series.insert(key.str()).second) problems.push_back("duplicate series: " + line);
    samples.push_back(s);
  }

  // Histograms: per label set (without le), buckets cumulative and ending in +Inf == _count.
  for (const auto& [family, type] : types) {
    if (type != "histogram") continue;
    std::map<std::string, std::vector<std::pair<double, double>>> buckets;
    std::map<std::string, double> counts;
    std::set<std::string> sums;
    for (const Sample& s : samples) {
      auto labels = s.labels;
      labels.erase("le");
      std::ostringstream key;
      for (auto& [k, v] : labels) key << k << '=' << v << '|';
      if (s.name == family + "_bucket") {
        auto le = s.labels.find("le");
        double bound = 0;
        if (le == s.labels.end() || !parse_value(le->second, bound)) {
          problems.push_back("bucket without a valid le in " + family);
          continue;
        }
        buckets[key.str()].push_back({bound, s.value});
      } else if (s.name == family + "_count") {
        counts[key.str()] = s.value;
      } else if (s.name == family + "_sum") {
        sums.insert(key.str());
      } else if (s.name == family) {
        problems.push_back("bare sample in histogram " + family);
      }
    }
    for (const auto& [key, list] : buckets) {
      for (std::size_t i = 1; i < list.size(); ++i) {
        if (!(list[i].first > list[i - 1].first))
          problems.push_back("le not increasing in " + family);
        if (list[i].second < list[i - 1].second)
          problems.push_back("buckets not cumulative in " + family);
      }
      if (list.empty() || !std::isinf(list.back().first)) {
        problems.push_back("no +Inf bucket in " + family);
      } else if (!counts.count(key) || counts[key] != list.back().second) {
        problems.push_back("+Inf bucket differs from _count in " + family);
      }
      if (!sums.count(key)) problems.push_back("no _sum in " + family);
    }
  }
  if (samples_out) *samples_out = std::move(samples);
  return problems;
}

double sample_value(const std::vector<Sample>& samples, const std::string& name,
                    const std::map<std::string, std::string>& labels) {
  for (const Sample& s : samples) {
    if (s.name != name) continue;
    bool match = true;
    for (auto& [k, v] : labels) {
      auto it = s.labels.find(k);
      match &= it != s.labels.end() && it->second == v;
    }
    if (match) return s.value;
  }
  return std::numeric_limits<double>::quiet_NaN();
}

}  // namespace onepass::runtime::testing

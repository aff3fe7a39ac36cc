// Oniguruma wrapper; see regex.h.
#include "tokenizer/hf_json/regex.h"

#include <oniguruma.h>

#include <mutex>
#include <vector>

#include "base/error.h"
#include "tokenizer/common/unicode.h"

namespace onepass::tokenizer::hf_json {
namespace {

void ensure_onig_initialized() {
  static std::once_flag once;
  std::call_once(once, [] {
    OnigEncoding encodings[] = {ONIG_ENCODING_UTF8};
    onig_initialize(encodings, 1);
  });
}

// One region per thread: onig_search on a shared regex is reentrant, the region is not.
struct RegionHolder {
  OnigRegion* region = onig_region_new();
  ~RegionHolder() { onig_region_free(region, 1); }
};

}  // namespace

Regex::Regex(std::string_view pattern) {
  ensure_onig_initialized();
  OnigRegex re = nullptr;
  OnigErrorInfo info;
  const auto* begin = reinterpret_cast<const OnigUChar*>(pattern.data());
  const int rc = onig_new(&re, begin, begin + pattern.size(), ONIG_OPTION_NONE, ONIG_ENCODING_UTF8,
                          ONIG_SYNTAX_DEFAULT, &info);
  if (rc != ONIG_NORMAL) {
    OnigUChar message[ONIG_MAX_ERROR_MESSAGE_LEN];
    onig_error_code_to_str(message, rc, &info);
    throw Error(ErrorKind::kInvalidModel, "tokenizer.json: invalid regex '" + std::string(pattern) +
                                              "': " + reinterpret_cast<const char*>(message));
  }
  regex_ = re;
}

Regex::~Regex() {
  if (regex_) onig_free(static_cast<OnigRegex>(regex_));
}

Matches Regex::find_matches(std::u32string_view text) const {
  Matches out;
  const auto n = static_cast<std::uint32_t>(text.size());
  if (text.empty()) {
    out.push_back({{0, 0}, false});
    return out;
  }
  // UTF-8 copy plus the code point index of every byte offset (char boundaries only).
  std::string utf8;
  utf8.reserve(text.size());
  std::vector<std::uint32_t> char_at;
  char_at.reserve(text.size() + 1);
  for (std::uint32_t i = 0; i < n; ++i) {
    const std::size_t before = utf8.size();
    unicode::append_utf8(text[i], utf8);
    char_at.resize(utf8.size(), i);
    char_at[before] = i;
  }
  char_at.push_back(n);

  thread_local RegionHolder holder;
  OnigRegion* region = holder.region;
  auto* re = static_cast<OnigRegex>(regex_);
  const auto* str = reinterpret_cast<const OnigUChar*>(utf8.data());
  const auto* end = str + utf8.size();
  std::size_t search_from = 0;
  long last_match_end = -1;
  std::uint32_t prev = 0;
  while (search_from <= utf8.size()) {
    onig_region_clear(region);
    const int r = onig_search(re, str, end, str + search_from, end, region, ONIG_OPTION_NONE);
    if (r < 0) break;  // ONIG_MISMATCH or a search error: no further match
    const auto s = static_cast<std::size_t>(region->beg[0]);
    const auto e = static_cast<std::size_t>(region->end[0]);
    if (s == e && last_match_end == static_cast<long>(e)) {
      // Same rule as the onig crate: skip an empty match glued to the previous one and retry
      // one code point further.
      if (search_from >= utf8.size()) break;
      search_from += unicode::utf8_length(text[char_at[search_from]]);
      continue;
    }
    search_from = e;
    last_match_end = static_cast<long>(e);
    const std::uint32_t cs = char_at[s];
    const std::uint32_t ce = char_at[e];
    if (prev != cs) out.push_back({{prev, cs}, false});
    out.push_back({{cs, ce}, true});
    prev = ce;
    if (s == e) {
      // An empty match does not advance by itself; the next search starts one code point on.
      if (e >= utf8.size()) break;
    }
  }
  if (prev != n) out.push_back({{prev, n}, false});
  return out;
}

Pattern::Pattern(const Json& pattern, std::string_view where) {
  if (pattern.is_object() && pattern.contains("String") && pattern.at("String").is_string()) {
    literal_ = unicode::decode_utf8(pattern.at("String").get<std::string>());
  } else if (pattern.is_object() && pattern.contains("Regex") && pattern.at("Regex").is_string()) {
    regex_ = std::make_unique<Regex>(pattern.at("Regex").get<std::string>());
  } else {
    bad_field(where, "pattern", "must be {\"String\": ...} or {\"Regex\": ...}");
  }
}

Matches Pattern::find_matches(std::u32string_view text) const {
  return regex_ ? regex_->find_matches(text) : find_literal_matches(text, literal_);
}

void Pattern::match_empty_literal_as_regex() {
  if (!regex_ && literal_.empty()) regex_ = std::make_unique<Regex>("");
}

}  // namespace onepass::tokenizer::hf_json

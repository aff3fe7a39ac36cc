// Oniguruma regular expressions, the engine the `tokenizers` crate uses for Split, Replace and
// the ByteLevel (GPT-2) pattern, so matches agree with it (Ruby syntax, UTF-8).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "tokenizer/hf_json/json_util.h"
#include "tokenizer/hf_json/normalized_string.h"

namespace onepass::tokenizer::hf_json {

class Regex {
 public:
  // Throws onepass::Error(kInvalidModel) naming the pattern when Oniguruma rejects it.
  explicit Regex(std::string_view pattern);
  ~Regex();
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;

  // Matches over code points. Successive non-overlapping matches as the Rust `onig` crate's
  // find_iter yields them (an empty match right after the previous match is skipped).
  Matches find_matches(std::u32string_view text) const;

 private:
  void* regex_ = nullptr;  // OnigRegex; kept opaque so that callers need not see oniguruma.h
};

// The `pattern` field of Replace and Split: {"String": literal} or {"Regex": oniguruma}.
class Pattern {
 public:
  // Throws Error(kInvalidModel) naming `where` when the field is neither form.
  Pattern(const Json& pattern, std::string_view where);

  Matches find_matches(std::u32string_view text) const;
  // The crate escapes a literal into an Oniguruma pattern, so an empty literal matches the empty
  // string everywhere (Split relies on it); only the regex engine reproduces that faithfully.
  void match_empty_literal_as_regex();

 private:
  std::u32string literal_;
  std::unique_ptr<Regex> regex_;  // set for {"Regex": ...}
};

}  // namespace onepass::tokenizer::hf_json

#include "model/heads/token_classification.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "base/error.h"
#include "model/heads/postprocess.h"
#include "model/heads/text_slice.h"

namespace onepass::model::heads {
namespace {

std::size_t code_point_count(std::string_view s) {
  std::size_t n = 0;
  for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80 ? 1 : 0;
  return n;
}

std::size_t first_argmax(std::span<const float> v) {
  std::size_t best = 0;
  for (std::size_t i = 1; i < v.size(); ++i) {
    if (v[i] > v[best]) best = i;
  }
  return best;
}

struct PreEntity {
  std::string word;
  std::vector<float> scores;
  std::size_t start = 0;
  std::size_t end = 0;
  std::size_t index = 0;
  bool is_subword = false;
};

struct Tagged {
  std::string label;
  float score = 0.0f;
  std::string word;
  std::size_t start = 0;
  std::size_t end = 0;
  std::size_t index = 0;
};

// get_tag: ("B", tag) / ("I", tag) for B-/I- labels, ("I", label) for any other.
std::pair<char, std::string_view> tag_of(std::string_view label) {
  if (label.substr(0, 2) == "B-") return {'B', label.substr(2)};
  if (label.substr(0, 2) == "I-") return {'I', label.substr(2)};
  return {'I', label};
}

// Every occurrence of `from` replaced, left to right (Rust's str::replace).
std::string replace_all(std::string_view s, std::string_view from, std::string_view to) {
  std::string out;
  std::size_t pos = 0;
  for (std::size_t at = s.find(from); at != std::string_view::npos; at = s.find(from, pos)) {
    out.append(s.substr(pos, at - pos));
    out.append(to);
    pos = at + from.size();
  }
  out.append(s.substr(pos));
  return out;
}

// GPT-2's bytes_to_unicode, inverted: the byte each stand-in code point holds, or -1. Printable
// Latin-1 bytes stand for themselves, the other 68 bytes for U+0100 onwards in byte order.
// (The tokenizer keeps its own forward table; the heads do not depend on the tokenizer.)
int byte_of_stand_in(char32_t c) {
  static const std::vector<int> table = [] {
    std::vector<int> t(256 + 68, -1);
    char32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
      t[printable ? static_cast<std::size_t>(b) : static_cast<std::size_t>(next++)] = b;
    }
    return t;
  }();
  return c < table.size() ? table[c] : -1;
}

// The code point of well-formed UTF-8 `s` that starts at byte i; returns its length in bytes.
std::size_t decode_at(std::string_view s, std::size_t i, char32_t& c) {
  const auto b = static_cast<unsigned char>(s[i]);
  const int n = b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
  c = n == 1 ? b : n == 2 ? (b & 0x1F) : n == 3 ? (b & 0x0F) : (b & 0x07);
  for (int k = 1; k < n && i + static_cast<std::size_t>(k) < s.size(); ++k)
    c = (c << 6) | (static_cast<unsigned char>(s[i + static_cast<std::size_t>(k)]) & 0x3F);
  return static_cast<std::size_t>(n);
}

// The code points of well-formed UTF-8 `s` (a token string from the tokenizer).
std::u32string code_points(std::string_view s) {
  std::u32string out;
  char32_t c = 0;
  for (std::size_t i = 0; i < s.size();) {
    i += decode_at(s, i, c);
    out.push_back(c);
  }
  return out;
}

// Unicode White_Space (Rust's char::is_whitespace, what the tokenizers library's lstrip / rstrip
// absorb next to an added token).
bool is_white_space(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F ||
         c == 0x3000;
}

// The pipeline's word for a token is convert_ids_to_tokens(id): the vocabulary's string. An
// encoding's token string is that, except for an added token matched with lstrip / rstrip
// (RoBERTa's <mask>, DeBERTa's [MASK]), whose string in the tokenizers library is the matched
// text, the whitespace it absorbed included. No vocabulary token of the WordPiece, SentencePiece
// or byte-level tokenizers holds a literal white space at its edges (they split on it or write
// it as ▁ / Ġ), so trimming it gives the vocabulary's string back.
std::string vocabulary_token(const std::string& token) {
  // Only the edges are decoded: this runs for every token of every request.
  std::size_t begin = 0;
  std::size_t end = token.size();
  char32_t c = 0;
  while (begin < end) {
    const std::size_t length = decode_at(token, begin, c);
    if (!is_white_space(c)) break;
    begin += length;
  }
  while (end > begin) {
    std::size_t last = end - 1;
    while (last > begin && (static_cast<unsigned char>(token[last]) & 0xC0) == 0x80) --last;
    decode_at(token, last, c);
    if (!is_white_space(c)) break;
    end = last;
  }
  return token.substr(begin, end - begin);
}

// Rust's String::from_utf8_lossy: each maximal subpart of an ill-formed sequence (a valid lead
// byte and the continuation bytes that still fit it, or one stray byte) becomes one U+FFFD.
std::string utf8_lossy(std::string_view bytes) {
  std::string out;
  for (std::size_t i = 0; i < bytes.size();) {
    const auto b = static_cast<unsigned char>(bytes[i]);
    std::size_t need = 0;                   // continuation bytes after the lead
    unsigned char low = 0x80, high = 0xBF;  // the range of the first continuation byte
    if (b < 0x80) {
      out += static_cast<char>(b);
      ++i;
      continue;
    } else if (b >= 0xC2 && b <= 0xDF) {
      need = 1;
    } else if (b >= 0xE0 && b <= 0xEF) {
      need = 2;
      if (b == 0xE0) low = 0xA0;
      if (b == 0xED) high = 0x9F;
    } else if (b >= 0xF0 && b <= 0xF4) {
      need = 3;
      if (b == 0xF0) low = 0x90;
      if (b == 0xF4) high = 0x8F;
    }
    std::size_t got = 0;
    while (need > 0 && got < need && i + 1 + got < bytes.size()) {
      const auto c = static_cast<unsigned char>(bytes[i + 1 + got]);
      const bool fits = got == 0 ? (c >= low && c <= high) : (c >= 0x80 && c <= 0xBF);
      if (!fits) break;
      ++got;
    }
    if (need > 0 && got == need) {
      out.append(bytes.substr(i, 1 + need));
    } else {
      out += "\xEF\xBF\xBD";
    }
    i += 1 + got;
  }
  return out;
}

// tokenizers' ByteLevel decoder over `tokens` (see TokenTextStyle::byte_level).
std::string byte_level_text(std::span<const std::string> tokens) {
  std::string bytes;
  for (const std::string& token : tokens) {
    std::string decoded;
    bool all_stand_ins = true;
    for (const char32_t c : code_points(token)) {
      const int b = byte_of_stand_in(c);
      if (b < 0) {
        all_stand_ins = false;
        break;
      }
      decoded += static_cast<char>(b);
    }
    bytes += all_stand_ins ? decoded : token;
  }
  return utf8_lossy(bytes);
}

}  // namespace

std::optional<Aggregation> aggregation_from_name(std::string_view name) {
  std::string lower(name);
  for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "none") return Aggregation::kNone;
  if (lower == "simple") return Aggregation::kSimple;
  if (lower == "first") return Aggregation::kFirst;
  if (lower == "average") return Aggregation::kAverage;
  if (lower == "max") return Aggregation::kMax;
  return std::nullopt;
}

std::string tokens_to_text(std::span<const std::string> tokens, const TokenTextStyle& style) {
  if (style.continuing_subword_prefix.empty() && style.byte_level) return byte_level_text(tokens);
  std::string out;
  const std::string_view prefix = style.continuing_subword_prefix;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    std::string token = tokens[i];
    if (!prefix.empty()) {
      // tokenizers' WordPiece decoder (cleanup on), token by token.
      if (i != 0) {
        if (token.rfind(prefix, 0) == 0) {
          token.erase(0, prefix.size());
        } else {
          token = " " + token;
        }
      }
      for (const auto& [from, to] : {std::pair<std::string_view, std::string_view>{" .", "."},
                                     {" ?", "?"},
                                     {" !", "!"},
                                     {" ,", ","},
                                     {" ' ", "'"},
                                     {" n't", "n't"},
                                     {" 'm", "'m"},
                                     {" do not", " don't"},
                                     {" 's", "'s"},
                                     {" 've", "'ve"},
                                     {" 're", "'re"}}) {
        token = replace_all(token, from, to);
      }
    } else if (style.metaspace) {
      // tokenizers' Metaspace decoder: the first token drops its "▁", later ones read a space.
      token = replace_all(token, "\xE2\x96\x81", i == 0 ? "" : " ");
    }
    out += token;
  }
  return out;
}

std::vector<Entity> extract_entities(const TokenizedSequence& seq,
                                     const std::vector<std::string>& id2label,
                                     const TokenTextStyle& style, Aggregation aggregation,
                                     const std::vector<std::string>& ignore_labels) {
  const std::size_t n = seq.ids.size();
  if (n == 0 || seq.tokens.size() != n || seq.offsets.size() != n || seq.special.size() != n ||
      seq.logits.size() % n != 0) {
    throw Error(ErrorKind::kInvalidInput, "token classification: tokens and logits disagree");
  }
  const std::size_t labels = seq.logits.size() / n;
  const auto starts = code_point_starts(seq.text);

  // gather_pre_entities
  std::vector<PreEntity> pre;
  for (std::size_t t = 0; t < n; ++t) {
    if (seq.special[t]) continue;
    PreEntity p;
    const float* row = seq.logits.data() + t * labels;
    p.scores = softmax(std::span<const float>(row, labels));
    p.word = vocabulary_token(seq.tokens[t]);
    p.start = seq.offsets[t].first;
    p.end = seq.offsets[t].second;
    p.index = t;
    const std::string_view word_ref = slice(seq.text, starts, p.start, p.end);
    if (!style.continuing_subword_prefix.empty()) {
      p.is_subword = code_point_count(p.word) != code_point_count(word_ref);
    } else {
      const std::string_view around =
          p.start > 0 ? slice(seq.text, starts, p.start - 1, p.start + 1) : std::string_view();
      p.is_subword = p.start > 0 && around.find(' ') == std::string_view::npos;
    }
    if (style.unk_token_id && seq.ids[t] == *style.unk_token_id) {
      p.word = std::string(word_ref);
      p.is_subword = false;
    }
    pre.push_back(std::move(p));
  }

  // aggregate: one tagged entity per token (none, simple) or per word (first, average, max).
  std::vector<Tagged> tagged;
  if (aggregation == Aggregation::kNone || aggregation == Aggregation::kSimple) {
    for (const auto& p : pre) {
      const std::size_t id = first_argmax(p.scores);
      tagged.push_back({label_name(id2label, id), p.scores[id], p.word, p.start, p.end, p.index});
    }
  } else {
    const auto aggregate_word = [&](std::size_t begin, std::size_t end) {
      std::vector<std::string> words;
      for (std::size_t i = begin; i < end; ++i) words.push_back(pre[i].word);
      Tagged w;
      w.word = tokens_to_text(words, style);
      w.start = pre[begin].start;
      w.end = pre[end - 1].end;
      w.index = pre[begin].index;
      if (aggregation == Aggregation::kAverage) {
        std::vector<float> mean(labels, 0.0f);
        for (std::size_t c = 0; c < labels; ++c) {
          double total = 0.0;
          for (std::size_t i = begin; i < end; ++i) total += pre[i].scores[c];
          mean[c] = static_cast<float>(total / static_cast<double>(end - begin));
        }
        const std::size_t id = first_argmax(mean);
        w.label = label_name(id2label, id);
        w.score = mean[id];
      } else {
        std::size_t chosen = begin;  // kFirst; kMax: the first token holding the highest score
        if (aggregation == Aggregation::kMax) {
          for (std::size_t i = begin + 1; i < end; ++i) {
            const float best = *std::max_element(pre[i].scores.begin(), pre[i].scores.end());
            const float held =
                *std::max_element(pre[chosen].scores.begin(), pre[chosen].scores.end());
            if (best > held) chosen = i;
          }
        }
        const std::size_t id = first_argmax(pre[chosen].scores);
        w.label = label_name(id2label, id);
        w.score = pre[chosen].scores[id];
      }
      tagged.push_back(std::move(w));
    };
    std::size_t word_begin = 0;
    for (std::size_t i = 1; i < pre.size(); ++i) {
      if (pre[i].is_subword) continue;
      aggregate_word(word_begin, i);
      word_begin = i;
    }
    if (!pre.empty()) aggregate_word(word_begin, pre.size());
  }

  const auto ignored = [&](const std::string& label) {
    return std::find(ignore_labels.begin(), ignore_labels.end(), label) != ignore_labels.end();
  };
  std::vector<Entity> out;
  if (aggregation == Aggregation::kNone) {
    for (auto& t : tagged) {
      if (ignored(t.label)) continue;
      out.push_back({std::move(t.label), t.score, t.index, std::move(t.word), t.start, t.end});
    }
    return out;
  }

  // group_entities / group_sub_entities
  const auto emit_group = [&](std::size_t begin, std::size_t end) {
    const std::string& first = tagged[begin].label;
    const auto dash = first.find('-');
    Entity e;
    e.label = dash == std::string::npos ? first : first.substr(dash + 1);
    double total = 0.0;
    std::vector<std::string> words;
    for (std::size_t i = begin; i < end; ++i) {
      total += tagged[i].score;
      words.push_back(tagged[i].word);
    }
    e.score = static_cast<float>(total / static_cast<double>(end - begin));
    e.word = tokens_to_text(words, style);
    e.start = tagged[begin].start;
    e.end = tagged[end - 1].end;
    if (!ignored(e.label)) out.push_back(std::move(e));
  };
  std::size_t group_begin = 0;
  for (std::size_t i = 1; i < tagged.size(); ++i) {
    const auto current = tag_of(tagged[i].label);
    if (current.second == tag_of(tagged[i - 1].label).second && current.first != 'B') continue;
    emit_group(group_begin, i);
    group_begin = i;
  }
  if (!tagged.empty()) emit_group(group_begin, tagged.size());
  return out;
}

std::vector<Entity> merge_overlapping_entities(std::vector<Entity> entities) {
  if (entities.empty()) return entities;
  // Python's sorted() is stable: entities with equal starts keep their window order.
  std::stable_sort(entities.begin(), entities.end(),
                   [](const Entity& a, const Entity& b) { return a.start < b.start; });
  std::vector<Entity> merged;
  Entity kept = entities.front();
  for (auto& entity : entities) {
    if (kept.start <= entity.start && entity.start < kept.end) {
      const auto length = static_cast<std::int64_t>(entity.end) - entity.start;
      const auto kept_length = static_cast<std::int64_t>(kept.end) - kept.start;
      if (length > kept_length || (length == kept_length && entity.score > kept.score))
        kept = std::move(entity);
    } else {
      merged.push_back(std::move(kept));
      kept = std::move(entity);
    }
  }
  merged.push_back(std::move(kept));
  return merged;
}

}  // namespace onepass::model::heads

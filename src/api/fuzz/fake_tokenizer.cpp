// The fake models' tokenizer (fake_tokenizer.h).
#include "api/fuzz/fake_tokenizer.h"

#include <algorithm>
#include <utility>

#include "base/error.h"

namespace onepass::api::fuzzing {

tokenizer::Encoding fake_encode(std::string_view text, std::optional<std::string_view> pair,
                                bool add_special_tokens) {
  tokenizer::Encoding e;
  std::int32_t word_index = 0;
  std::int32_t type_id = 0;
  const auto add = [&](std::int32_t id, std::string token, std::uint32_t start, std::uint32_t end,
                       bool special) {
    e.ids.push_back(id);
    e.type_ids.push_back(type_id);
    e.tokens.push_back(std::move(token));
    e.offsets.push_back({start, end});
    e.special_tokens_mask.push_back(special ? 1 : 0);
    e.word_ids.push_back(special ? -1 : word_index++);
  };
  const auto words = [&](std::string_view t) {
    std::uint32_t cp = 0, start = 0;  // code points: a UTF-8 continuation byte adds none
    std::string word;
    for (std::size_t i = 0; i <= t.size(); ++i) {
      if (i == t.size() || t[i] == ' ') {
        if (!word.empty())
          add(100 + static_cast<std::int32_t>(word.size() % 800), word, start, cp, false);
        word.clear();
        if (i < t.size()) ++cp;
        continue;
      }
      if (word.empty()) start = cp;
      word.push_back(t[i]);
      if ((static_cast<unsigned char>(t[i]) & 0xC0) != 0x80) ++cp;
    }
  };
  if (add_special_tokens) add(1, "[CLS]", 0, 0, true);
  words(text);
  if (add_special_tokens) add(2, "[SEP]", 0, 0, true);
  if (pair) {
    word_index = 0;
    type_id = 1;
    words(*pair);
    if (add_special_tokens) add(2, "[SEP]", 0, 0, true);
  }
  return e;
}

std::string fake_decode(std::span<const std::int32_t> ids, int vocab_size,
                        bool skip_special_tokens) {
  std::string text;
  for (const std::int32_t id : ids) {
    if (id < 0 || id >= vocab_size)
      throw Error(ErrorKind::kInvalidInput, "token id outside the vocabulary");
    if (skip_special_tokens && id < 3) continue;
    if (!text.empty()) text.push_back(' ');
    text.append(std::to_string(id));
  }
  return text;
}

int fake_text_tokens(std::string_view text) {
  return 1 + static_cast<int>(std::count(text.begin(), text.end(), ' '));
}

int fake_token_count(const runtime::InferenceItem& item) {
  if (item.pretokenized) return static_cast<int>(item.input_ids.size());
  int tokens = 2 + fake_text_tokens(item.text);                         // [CLS] A [SEP]
  if (item.text_pair) tokens += 1 + fake_text_tokens(*item.text_pair);  // B [SEP]
  return tokens;
}

}  // namespace onepass::api::fuzzing

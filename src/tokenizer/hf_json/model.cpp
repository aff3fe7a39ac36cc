// What the three tokenizer.json models share: the vocab object and the dispatch on "type".
#include "tokenizer/hf_json/model.h"

#include <string>

namespace onepass::tokenizer::hf_json {

void parse_vocab(const Json& vocab_json, std::string_view where, Vocab& vocab,
                 std::vector<std::string>& by_id) {
  if (!vocab_json.is_object()) bad_field(where, "vocab", "must be an object");
  for (const auto& [token, id] : vocab_json.items()) {
    if (!id.is_number_integer() || id.get<std::int64_t>() < 0 ||
        id.get<std::int64_t>() > kMaxVocabId)
      bad_field(where, "vocab", "must map tokens to ids from 0 to " + std::to_string(kMaxVocabId));
    const auto i = static_cast<std::size_t>(id.get<std::int64_t>());
    vocab[token] = static_cast<std::int32_t>(i);
    if (i >= by_id.size()) by_id.resize(i + 1);
    by_id[i] = token;
  }
}

std::unique_ptr<Model> make_model(const Json& j) {
  const std::string type = j.is_object() && !j.contains("type") && j.contains("merges")
                               ? std::string("BPE")
                               : type_of(j, "model");
  if (type == "WordPiece") return make_wordpiece(j);
  if (type == "Unigram") return make_unigram(j);
  if (type == "BPE") return make_bpe(j);
  unsupported("model", type);
}

}  // namespace onepass::tokenizer::hf_json

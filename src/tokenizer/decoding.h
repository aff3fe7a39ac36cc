// Turning ids back into text the way transformers' tokenizer.decode() does for a model folder:
// the tokenizer's own decode (Tokenizer::decode), then, when the folder's tokenizer_config.json
// asks for it (the default), clean_up_tokenization. The fill-mask pipeline's token_str and
// sequence are made this way.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "tokenizer/tokenizer.h"

namespace onepass::tokenizer {

// What transformers reads from a folder's tokenizer_config.json / special_tokens_map.json
// beside the vocabulary, whatever the tokenizer source.
struct TokenizerSettings {
  std::optional<std::string> mask_token;  // unset: the files name none
  std::optional<std::string> pad_token;
  bool clean_up_tokenization_spaces = true;
};

// Never throws: a folder whose files are missing or unreadable gets the defaults (the tokenizer
// itself loaded, and these files only refine decoding).
TokenizerSettings read_tokenizer_settings(const std::filesystem::path& model_dir);

// PreTrainedTokenizerBase.clean_up_tokenization: the spaces before ". ? ! ," and English
// contractions removed (" n't", " 'm", " 's", " 've", " 're", " ' ").
std::string clean_up_tokenization(std::string text);

// tokenizer.decode(ids, skip_special_tokens) as transformers answers it for the folder.
std::string decode_text(const Tokenizer& tokenizer, const TokenizerSettings& settings,
                        std::span<const std::int32_t> ids, bool skip_special_tokens);

}  // namespace onepass::tokenizer

#include "tokenizer/decoding.h"

#include <string_view>
#include <utility>

#include "tokenizer/common/replace.h"
#include "tokenizer/slow/slow_config.h"

namespace onepass::tokenizer {

TokenizerSettings read_tokenizer_settings(const std::filesystem::path& model_dir) {
  TokenizerSettings settings;
  try {
    const slow::SlowConfig config = slow::read_slow_config(model_dir);
    settings.mask_token = config.mask_token;
    settings.pad_token = config.pad_token;
    settings.clean_up_tokenization_spaces = config.clean_up_tokenization_spaces.value_or(true);
  } catch (const std::exception&) {
    // The defaults: see the header.
  }
  return settings;
}

std::string clean_up_tokenization(std::string text) {
  // transformers' replacements, in its order.
  static constexpr std::pair<std::string_view, std::string_view> kSteps[] = {
      {" .", "."},     {" ?", "?"},   {" !", "!"},   {" ,", ","},     {" ' ", "'"},
      {" n't", "n't"}, {" 'm", "'m"}, {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}};
  for (const auto& [from, to] : kSteps) replace_all(text, from, to);
  return text;
}

std::string decode_text(const Tokenizer& tokenizer, const TokenizerSettings& settings,
                        std::span<const std::int32_t> ids, bool skip_special_tokens) {
  std::string text = tokenizer.decode(ids, skip_special_tokens);
  return settings.clean_up_tokenization_spaces ? clean_up_tokenization(std::move(text)) : text;
}

}  // namespace onepass::tokenizer

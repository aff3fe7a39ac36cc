// The files that transformers' slow tokenizers save beside their vocabulary
// (tokenizer_config.json, special_tokens_map.json, added_tokens.json), read into native types.
// Mirrors what PreTrainedTokenizerBase.from_pretrained (v4.47.1) does with them: the
// added_tokens_decoder of tokenizer_config.json wins; special_tokens_map.json overrides the
// special token strings; added_tokens.json is only used by older saves without a decoder.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace onepass::tokenizer::slow {

// One AddedToken of the slow tokenizer: matched in the raw text before the model runs.
struct AddedTokenSpec {
  std::string content;
  std::int32_t id = -1;  // -1 until resolved against the base vocabulary
  bool lstrip = false;
  bool rstrip = false;
  bool single_word = false;
  bool normalized = false;
  bool special = false;
};

struct SlowConfig {
  std::string tokenizer_class;  // "" when tokenizer_config.json does not say
  // Special token strings by attribute (SPECIAL_TOKENS_ATTRIBUTES order), absent when unset.
  std::optional<std::string> bos_token, eos_token, unk_token, sep_token, pad_token, cls_token,
      mask_token;
  std::vector<std::string> additional_special_tokens;
  std::vector<AddedTokenSpec> added_tokens;  // added_tokens_decoder (or added_tokens.json)
  // Flags of special tokens written as serialized AddedTokens, for those not yet added.
  std::vector<AddedTokenSpec> special_token_flags;

  // Options of the concrete tokenizer classes, with their constructor defaults unset.
  std::optional<bool> do_lower_case;
  std::optional<bool> strip_accents;  // null in the file = unset
  std::optional<bool> tokenize_chinese_chars;
  std::optional<bool> do_basic_tokenize;
  std::optional<bool> split_by_punct;
  std::optional<bool> add_prefix_space;  // the byte-level BPE classes (RoBERTa, DeBERTa, ...)
  std::optional<bool> trim_offsets;
  // decode()'s cleanup of the spaces before punctuation (PreTrainedTokenizerBase: true unless
  // the file says otherwise).
  std::optional<bool> clean_up_tokenization_spaces;
  std::vector<std::string> never_split;

  // all_special_tokens: the attributes above in order, then additional_special_tokens, without
  // duplicates (PreTrainedTokenizerBase.all_special_tokens).
  std::vector<std::string> all_special_tokens() const;
};

// Reads the files present in `model_dir` (none of them is required). Throws onepass::Error
// (kInvalidModel) naming the file when one is not valid JSON or has fields of the wrong type.
SlowConfig read_slow_config(const std::filesystem::path& model_dir);

// Sets a special token attribute that the files left unset (a class's constructor default).
void default_special_token(std::optional<std::string>& attribute, const char* value);

// Adds the special tokens that are not yet added tokens (PreTrainedTokenizer.__init__ does this
// with _add_tokens(special_tokens=True)), then gives every added token without an id one:
// `base_id(content)` when the base vocabulary has it, else the next free id from `next_id`.
// An added token whose id the base vocabulary contradicts keeps the id its file gives.
void finalize_added_tokens(
    SlowConfig& config, const std::function<std::optional<std::int32_t>(std::string_view)>& base_id,
    std::int32_t next_id);

}  // namespace onepass::tokenizer::slow

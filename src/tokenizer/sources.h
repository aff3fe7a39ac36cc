// The four tokenizer sources; load_tokenizer() (load.cpp) picks one for a model folder.
#pragma once

#include <filesystem>
#include <memory>

#include "tokenizer/tokenizer.h"

namespace onepass::tokenizer {

// Hugging Face tokenizer.json: ids of the `tokenizers` library (the fast tokenizer).
std::unique_ptr<Tokenizer> load_tokenizer_json(const std::filesystem::path& tokenizer_json);

// SentencePiece model (spm.model, sentencepiece.bpe.model) with the folder's
// tokenizer_config.json / special_tokens_map.json / added_tokens.json: ids of the slow
// XLMRobertaTokenizer, CamembertTokenizer or DebertaV2Tokenizer, chosen from
// tokenizer_config.json.
std::unique_ptr<Tokenizer> load_sentencepiece_tokenizer(const std::filesystem::path& model_dir,
                                                        const std::filesystem::path& spm_model);

// WordPiece vocab.txt with tokenizer_config.json: ids of the slow BertTokenizer.
std::unique_ptr<Tokenizer> load_wordpiece_tokenizer(const std::filesystem::path& model_dir,
                                                    const std::filesystem::path& vocab_txt);

// Byte-level BPE vocab.json + merges.txt (beside it) with tokenizer_config.json, no
// tokenizer.json: the fast tokenizer transformers converts RobertaTokenizer, BartTokenizer,
// LongformerTokenizer or DebertaTokenizer to (bpe_files/bpe_files_tokenizer.cpp).
std::unique_ptr<Tokenizer> load_bpe_files_tokenizer(const std::filesystem::path& model_dir,
                                                    const std::filesystem::path& vocab_json);

}  // namespace onepass::tokenizer

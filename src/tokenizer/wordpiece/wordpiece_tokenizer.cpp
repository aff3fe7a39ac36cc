// vocab.txt + tokenizer_config.json: the ids of transformers' slow BertTokenizer (v4.47.1,
// models/bert/tokenization_bert.py) and of the classes that run its code (DistilBERT's,
// ELECTRA's, MPNet's). BasicTokenizer (basic_tokenizer.h) splits words, then
// WordpieceTokenizer takes the longest vocabulary prefix, continues with "##" pieces, and gives
// one [UNK] for a word it cannot cover or that is longer than 100 code points.
// BertTokenizer._tokenize passes all_special_tokens as never_split to BasicTokenizer (so a word
// that spells a special token after cleaning is not split at its brackets) but only a word in
// the constructor's never_split skips WordPiece.
#include <algorithm>
#include <fstream>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "base/error.h"
#include "base/read_file.h"
#include "tokenizer/common/unicode.h"
#include "tokenizer/slow/slow_tokenizer.h"
#include "tokenizer/sources.h"
#include "tokenizer/wordpiece/basic_tokenizer.h"

namespace onepass::tokenizer {
namespace {

namespace fs = std::filesystem;
using slow::Segment;
using slow::TextPiece;
using wordpiece::Span;
using wordpiece::Word;

constexpr std::size_t kMaxInputCharsPerWord = 100;

// Pieces of a word are looked up as views, without a copy.
using VocabMap = slow::StringMap<std::int32_t>;

// load_vocab(): one token per line, the line number is the id, a later duplicate wins. Python
// reads the file in text mode, so "\r\n" and a lone "\r" end lines too.
std::vector<std::string> read_vocab_lines(const fs::path& vocab_txt) {
  const std::string bytes = read_file(vocab_txt, kTokenizerFileLimitBytes);
  std::vector<std::string> lines;
  std::string line;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    const char c = bytes[i];
    if (c == '\n' || c == '\r') {
      lines.push_back(std::move(line));
      line.clear();
      if (c == '\r' && i + 1 < bytes.size() && bytes[i + 1] == '\n') ++i;
    } else {
      line.push_back(c);
    }
  }
  if (!line.empty()) lines.push_back(std::move(line));
  try {
    for (const auto& token : lines) unicode::validate_utf8(token);
  } catch (const Error&) {
    throw Error(ErrorKind::kInvalidModel, vocab_txt.filename().string() + " is not valid UTF-8");
  }
  return lines;
}

std::size_t code_points(std::string_view utf8) {
  return static_cast<std::size_t>(std::count_if(utf8.begin(), utf8.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}

class WordPieceTokenizer final : public slow::SlowTokenizer {
 public:
  WordPieceTokenizer(const fs::path& model_dir, const fs::path& vocab_txt) {
    const auto lines = read_vocab_lines(vocab_txt);
    if (lines.empty()) {
      throw Error(ErrorKind::kInvalidModel, vocab_txt.filename().string() + " is empty");
    }
    id_to_token_ = lines;
    for (std::size_t i = 0; i < lines.size(); ++i) {
      vocab_.insert_or_assign(lines[i], static_cast<std::int32_t>(i));
    }

    slow::SlowConfig config = slow::read_slow_config(model_dir);
    // transformers' DistilBertTokenizer and ElectraTokenizer are BertTokenizer's code under
    // another name (models/distilbert, models/electra: "Copied from BertTokenizer"); DistilBERT
    // only leaves token_type_ids out of its model inputs, which its model has no embedding for.
    const auto is_class = [&](std::string_view name) {
      return config.tokenizer_class.rfind(name, 0) == 0;
    };
    // MPNetTokenizer (models/mpnet) runs BertTokenizer's _tokenize too, with RoBERTa's special
    // tokens and layout: <s> A </s></s> B </s>, every token type 0.
    const bool mpnet = is_class("MPNetTokenizer");
    if (!config.tokenizer_class.empty() && !is_class("BertTokenizer") &&
        !is_class("DistilBertTokenizer") && !is_class("ElectraTokenizer") && !mpnet) {
      throw Error(ErrorKind::kUnsupported,
                  "tokenizer_class " + config.tokenizer_class +
                      " is not supported with vocab.txt (supported: BertTokenizer, "
                      "DistilBertTokenizer, ElectraTokenizer, MPNetTokenizer)");
    }
    if (mpnet) {
      for (auto [attribute, value] : {std::pair{&config.bos_token, "<s>"},
                                      {&config.eos_token, "</s>"},
                                      {&config.sep_token, "</s>"},
                                      {&config.cls_token, "<s>"},
                                      {&config.unk_token, "[UNK]"},
                                      {&config.pad_token, "<pad>"},
                                      {&config.mask_token, "<mask>"}}) {
        slow::default_special_token(*attribute, value);
      }
      // MPNetTokenizer wraps a plain-string mask token as AddedToken(lstrip=True).
      slow::AddedTokenSpec mask{*config.mask_token, -1, true, false, false, false, true};
      config.special_token_flags.insert(config.special_token_flags.begin(), mask);
    } else {
      for (auto [attribute, value] : {std::pair{&config.unk_token, "[UNK]"},
                                      {&config.sep_token, "[SEP]"},
                                      {&config.pad_token, "[PAD]"},
                                      {&config.cls_token, "[CLS]"},
                                      {&config.mask_token, "[MASK]"}}) {
        slow::default_special_token(*attribute, value);
      }
    }
    const bool do_lower_case = config.do_lower_case.value_or(true);
    do_basic_tokenize_ = config.do_basic_tokenize.value_or(true);
    wordpiece::BasicTokenizerOptions options;
    options.do_lower_case = do_lower_case;
    options.strip_accents = config.strip_accents;
    options.tokenize_chinese_chars = config.tokenize_chinese_chars.value_or(true);
    for (const auto& token : config.never_split) {
      never_split_.insert(unicode::decode_utf8(token));
      options.never_split.insert(unicode::decode_utf8(token));
    }
    for (const auto& token : config.all_special_tokens()) {
      options.never_split.insert(unicode::decode_utf8(token));
    }
    basic_.emplace(std::move(options));

    slow::SpecialLayout layout;
    layout.double_sep_in_pair = mpnet;
    layout.second_text_type_one = !mpnet;
    init(std::move(config), layout, lines.size(), do_lower_case);

    // convert_tokens_to_ids looks at the added tokens first; fold that into the maps WordPiece
    // reads so a piece costs one lookup.
    for (const auto& token : this->config().added_tokens) {
      if (auto it = vocab_.find(token.content); it != vocab_.end()) it->second = token.id;
      added_by_id_[token.id] = token.content;
    }
    for (const auto& [token, id] : vocab_) {
      const std::size_t length = code_points(token);
      if (token.rfind("##", 0) == 0) {
        continuation_.emplace(token.substr(2), id);
        max_continuation_chars_ = std::max(max_continuation_chars_, length - 2);
      }
      max_word_start_chars_ = std::max(max_word_start_chars_, length);
    }
    unk_token_ = *this->config().unk_token;
  }

  std::string_view source_kind() const override { return "wordpiece"; }
  std::string_view continuing_subword_prefix() const override { return "##"; }

 protected:
  void tokenize_piece(const TextPiece& piece, Segment& out) const override {
    std::vector<Word> words;
    if (do_basic_tokenize_) {
      basic_->tokenize(piece, words);
    } else {
      wordpiece::split_on_python_whitespace(piece, words);
    }
    // The converted fast tokenizer's BertPreTokenizer splits where BasicTokenizer does (on
    // whitespace and punctuation; the normalizer spaces out CJK ideographs): one word each.
    for (const Word& word : words) {
      out.end_word();
      if (do_basic_tokenize_ && never_split_.count(word.text)) {
        const std::string token = unicode::encode_utf8(word.text);
        out.push(token_to_id(token).value_or(unk_id()), token, word.spans.front().first,
                 word.spans.back().second);
      } else {
        wordpiece(word, out);
      }
    }
  }

  std::optional<std::int32_t> base_token_to_id(std::string_view token) const override {
    const auto it = vocab_.find(token);
    if (it == vocab_.end()) return std::nullopt;
    return it->second;
  }

  // BertTokenizer.convert_tokens_to_string (MPNet's is the same): tokens joined by spaces, then
  // " ##" removed so that subwords join the token before them.
  std::string convert_tokens_to_string(const std::vector<std::string>& tokens) const override {
    std::string joined;
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      if (i != 0) joined.push_back(' ');
      joined += tokens[i];
    }
    std::string out;
    for (std::size_t i = 0; i < joined.size();) {
      if (joined.compare(i, 3, " ##") == 0) {
        i += 3;
      } else {
        out.push_back(joined[i++]);
      }
    }
    return unicode::python_strip(out);
  }

  std::string base_id_to_token(std::int32_t id) const override {
    return id >= 0 && static_cast<std::size_t>(id) < id_to_token_.size()
               ? id_to_token_[static_cast<std::size_t>(id)]
               : unk_token_;
  }

 private:
  // WordpieceTokenizer.tokenize for one word: greedy longest match from the left. Substrings
  // longer than the longest vocabulary entry cannot match, so the search starts there.
  void wordpiece(const Word& word, Segment& out) const {
    const Span whole{word.spans.front().first, word.spans.back().second};
    const std::size_t n = word.text.size();
    if (n > kMaxInputCharsPerWord) {
      out.push(unk_id(), unk_token_, whole.first, whole.second);
      return;
    }
    std::string utf8;
    std::vector<std::size_t> byte_at;  // byte offset of each code point, plus the end
    for (char32_t cp : word.text) {
      byte_at.push_back(utf8.size());
      unicode::append_utf8(cp, utf8);
    }
    byte_at.push_back(utf8.size());
    const std::size_t first_piece = out.size();
    std::size_t start = 0;
    while (start < n) {
      const VocabMap& map = start == 0 ? vocab_ : continuation_;
      const std::size_t longest = start == 0 ? max_word_start_chars_ : max_continuation_chars_;
      std::size_t end = std::min(n, start + longest);
      std::optional<std::int32_t> id;
      for (; end > start; --end) {
        const auto it =
            map.find(std::string_view(utf8).substr(byte_at[start], byte_at[end] - byte_at[start]));
        if (it != map.end()) {
          id = it->second;
          break;
        }
      }
      if (!id) {
        // The whole word becomes one [UNK]; drop the pieces already matched.
        out.resize(first_piece);
        out.push(unk_id(), unk_token_, whole.first, whole.second);
        return;
      }
      std::string token = utf8.substr(byte_at[start], byte_at[end] - byte_at[start]);
      if (start > 0) token.insert(0, "##");
      if (auto it = added_by_id_.find(*id); it != added_by_id_.end()) token = it->second;
      out.push(*id, std::move(token), word.spans[start].first, word.spans[end - 1].second);
      start = end;
    }
  }

  VocabMap vocab_;
  VocabMap continuation_;  // "##x" entries under "x"
  std::vector<std::string> id_to_token_;
  std::unordered_map<std::int32_t, std::string> added_by_id_;
  std::size_t max_word_start_chars_ = 0;
  std::size_t max_continuation_chars_ = 0;
  std::optional<wordpiece::BasicTokenizer> basic_;
  std::unordered_set<std::u32string> never_split_;  // the constructor's never_split only
  bool do_basic_tokenize_ = true;
  std::string unk_token_;
};

}  // namespace

std::unique_ptr<Tokenizer> load_wordpiece_tokenizer(const fs::path& model_dir,
                                                    const fs::path& vocab_txt) {
  return std::make_unique<WordPieceTokenizer>(model_dir, vocab_txt);
}

}  // namespace onepass::tokenizer

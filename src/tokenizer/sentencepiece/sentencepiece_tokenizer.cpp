// SentencePiece model + the folder's tokenizer files: the ids of transformers' slow
// XLMRobertaTokenizer, CamembertTokenizer or DebertaV2Tokenizer (v4.47.1). libsentencepiece does
// the normalization (the model's charsmap) and the segmentation, exactly as the Python binding
// the slow tokenizers call; this file adds what the three classes do around it.
//
// XLMRobertaTokenizer (tokenization_xlm_roberta.py): fairseq ids. <s> 0, <pad> 1, </s> 2,
// <unk> 3, every other piece its SentencePiece id + 1, and <mask> after the last piece; a piece
// whose SentencePiece id is 0 (the model's unk) becomes <unk>. Pair: <s> A </s></s> B </s>,
// token type ids all 0.
// CamembertTokenizer (tokenization_camembert.py): the same with fairseq_offset 4. Its added
// tokens are <s>NOTUSED 0, <pad> 1, </s>NOTUSED 2, <unk> 3, <unk>NOTUSED 4, whatever the files
// say for those ids; <s> and </s> are the model's own pieces (SentencePiece id + 4, so 5 and 6
// when the model numbers them 1 and 2), and <mask> comes after the last piece (pieces + 4).
// DebertaV2Tokenizer (tokenization_deberta_v2.py): SentencePiece ids as they are; a piece outside
// the vocabulary (or "<unk>") is spelled "[UNK]" before it gets an id; split_by_punct encodes the
// runs between punctuation characters separately; do_lower_case lowercases each text piece.
#include <sentencepiece_processor.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <unordered_map>

#include "base/error.h"
#include "base/read_file.h"
#include "tokenizer/common/unicode.h"
#include "tokenizer/slow/slow_tokenizer.h"
#include "tokenizer/sources.h"

namespace onepass::tokenizer {
namespace {

namespace fs = std::filesystem;
using slow::Segment;
using slow::TextPiece;

enum class Flavor { kXlmRoberta, kCamembert, kDebertaV2 };

// SentencePiece's "▁" (U+2581), which stands for a space.
constexpr std::string_view kSpace = "\xE2\x96\x81";

// The added tokens CamembertTokenizer.__init__ puts at ids 0-4 (its _added_tokens_decoder,
// which overrides the files' entries for those ids).
constexpr const char* kCamembertUnused[] = {"<s>NOTUSED", "</s>NOTUSED", "<unk>NOTUSED"};

Flavor pick_flavor(const slow::SlowConfig& config, const fs::path& spm_model) {
  const std::string& cls = config.tokenizer_class;
  if (cls.rfind("XLMRobertaTokenizer", 0) == 0) return Flavor::kXlmRoberta;
  if (cls.rfind("CamembertTokenizer", 0) == 0) return Flavor::kCamembert;
  if (cls.rfind("DebertaV2Tokenizer", 0) == 0) return Flavor::kDebertaV2;
  if (!cls.empty()) {
    throw Error(ErrorKind::kUnsupported,
                "tokenizer_class " + cls +
                    " is not supported with a SentencePiece model (supported: "
                    "XLMRobertaTokenizer, CamembertTokenizer, DebertaV2Tokenizer)");
  }
  // No class named: the special tokens (or the file name) tell the layouts apart; only
  // CamemBERT lists <s>NOTUSED.
  const auto& extra = config.additional_special_tokens;
  if (std::find(extra.begin(), extra.end(), kCamembertUnused[0]) != extra.end())
    return Flavor::kCamembert;
  if (config.cls_token)
    return *config.cls_token == "<s>" ? Flavor::kXlmRoberta : Flavor::kDebertaV2;
  return spm_model.filename() == "sentencepiece.bpe.model" ? Flavor::kXlmRoberta
                                                           : Flavor::kDebertaV2;
}

class SentencePieceTokenizer final : public slow::SlowTokenizer {
 public:
  SentencePieceTokenizer(const fs::path& model_dir, const fs::path& spm_model) {
    const std::string name = spm_model.filename().string();
    const std::string bytes = read_file(spm_model, kTokenizerFileLimitBytes);
    if (!spm_.LoadFromSerializedProto(bytes).ok()) {
      throw Error(ErrorKind::kInvalidModel, name + " is not a valid SentencePiece model");
    }
    slow::SlowConfig config = slow::read_slow_config(model_dir);
    flavor_ = pick_flavor(config, spm_model);
    spm_size_ = spm_.GetPieceSize();
    if (flavor_ != Flavor::kDebertaV2) {
      for (auto [attribute, value] : {std::pair{&config.bos_token, "<s>"},
                                      {&config.eos_token, "</s>"},
                                      {&config.sep_token, "</s>"},
                                      {&config.cls_token, "<s>"},
                                      {&config.unk_token, "<unk>"},
                                      {&config.pad_token, "<pad>"},
                                      {&config.mask_token, "<mask>"}}) {
        slow::default_special_token(*attribute, value);
      }
      // Both classes wrap a plain-string mask token as AddedToken(lstrip=True).
      slow::AddedTokenSpec mask{*config.mask_token, -1, true, false, false, false, true};
      config.special_token_flags.insert(config.special_token_flags.begin(), mask);
      if (flavor_ == Flavor::kXlmRoberta) {
        fairseq_offset_ = 1;
        fairseq_ = {{"<s>", 0}, {"<pad>", 1}, {"</s>", 2}, {"<unk>", 3}};
      } else {
        fairseq_offset_ = 4;
        fairseq_ = {{kCamembertUnused[0], 0},
                    {*config.pad_token, 1},
                    {kCamembertUnused[1], 2},
                    {*config.unk_token, 3},
                    {kCamembertUnused[2], 4}};
        add_camembert_tokens(config);
      }
      fairseq_.emplace("<mask>", spm_size_ + fairseq_offset_);
    } else {
      for (auto [attribute, value] : {std::pair{&config.bos_token, "[CLS]"},
                                      {&config.eos_token, "[SEP]"},
                                      {&config.sep_token, "[SEP]"},
                                      {&config.cls_token, "[CLS]"},
                                      {&config.unk_token, "[UNK]"},
                                      {&config.pad_token, "[PAD]"},
                                      {&config.mask_token, "[MASK]"}}) {
        slow::default_special_token(*attribute, value);
      }
      do_lower_case_ = config.do_lower_case.value_or(false);
      split_by_punct_ = config.split_by_punct.value_or(false);
    }
    // The fairseq flavors' ids run to the last piece + offset, then <mask>.
    const std::size_t base_size = static_cast<std::size_t>(spm_size_ + fairseq_offset_) +
                                  (flavor_ == Flavor::kDebertaV2 ? 0 : 1);
    const bool lowercase_text = flavor_ == Flavor::kDebertaV2 && do_lower_case_;
    slow::SpecialLayout layout;
    layout.double_sep_in_pair = flavor_ != Flavor::kDebertaV2;
    layout.second_text_type_one = flavor_ == Flavor::kDebertaV2;
    init(std::move(config), layout, base_size, lowercase_text);
    for (const auto& token : this->config().added_tokens)
      added_tokens_by_id_[token.id] = token.content;
    deberta_unk_id_ = token_to_id("[UNK]").value_or(unk_id());
  }

  std::string_view source_kind() const override { return "sentencepiece"; }

 protected:
  void tokenize_piece(const TextPiece& piece, Segment& out) const override {
    if (flavor_ == Flavor::kDebertaV2 && (do_lower_case_ || split_by_punct_)) {
      TextPiece text = piece;
      if (do_lower_case_) {
        // DebertaV2Tokenizer._tokenize: text.lower() on the whole piece (final sigma applies).
        std::vector<std::uint32_t> index;
        text.text = unicode::lowercase(piece.text, true, &index);
        text.source.clear();
        for (auto i : index) text.source.push_back(piece.source[i]);
      }
      if (split_by_punct_) {
        // SPMTokenizer._run_split_on_punc: each punctuation character is a run of its own.
        std::size_t start = 0;
        for (std::size_t i = 0; i < text.text.size(); ++i) {
          if (!unicode::is_punctuation(text.text[i])) continue;
          encode_run(text, start, i, out);
          encode_run(text, i, i + 1, out);
          start = i + 1;
        }
        encode_run(text, start, text.text.size(), out);
        return;
      }
      encode_run(text, 0, text.text.size(), out);
      return;
    }
    encode_run(piece, 0, piece.text.size(), out);
  }

  std::optional<std::int32_t> base_token_to_id(std::string_view token) const override {
    if (flavor_ != Flavor::kDebertaV2) {
      if (auto it = fairseq_.find(token); it != fairseq_.end()) return it->second;
      const int id = spm_.PieceToId(token);
      if (id == 0 || spm_.IdToPiece(id) != token) return std::nullopt;
      return id + fairseq_offset_;
    }
    const int id = spm_.PieceToId(token);
    if (id < 0 || id >= spm_size_ || spm_.IdToPiece(id) != token) return std::nullopt;
    return id;
  }

  std::string base_id_to_token(std::int32_t id) const override {
    if (flavor_ != Flavor::kDebertaV2) {
      for (const auto& [token, fairseq_id] : fairseq_) {
        if (fairseq_id == id) return token;
      }
      const std::int32_t spm_id = id - fairseq_offset_;
      return spm_id >= 0 && spm_id < spm_size_ ? spm_.IdToPiece(spm_id) : std::string();
    }
    return id >= 0 && id < spm_size_ ? spm_.IdToPiece(id) : std::string();
  }

  std::string convert_tokens_to_string(const std::vector<std::string>& tokens) const override {
    if (flavor_ == Flavor::kXlmRoberta) {
      // "".join(tokens).replace("▁", " ").strip()
      std::string joined;
      for (const auto& token : tokens) joined += token;
      std::string out;
      for (std::size_t i = 0; i < joined.size();) {
        if (joined.compare(i, kSpace.size(), kSpace) == 0) {
          out.push_back(' ');
          i += kSpace.size();
        } else {
          out.push_back(joined[i++]);
        }
      }
      return unicode::python_strip(out);
    }
    // CamembertTokenizer and DebertaV2Tokenizer (its SPMTokenizer.decode): runs of ordinary
    // pieces through SentencePiece's own decoder, each special token written as it is with a
    // space before the first of a run of them.
    std::string out;
    std::vector<std::string> run;
    bool previous_special = false;
    for (const auto& token : tokens) {
      if (is_special_token(token)) {
        if (!previous_special) out.push_back(' ');
        out += decode_pieces(run) + token;
        run.clear();
        previous_special = true;
      } else {
        run.push_back(token);
        previous_special = false;
      }
    }
    out += decode_pieces(run);
    return unicode::python_strip(out);
  }

 private:
  std::string decode_pieces(const std::vector<std::string>& pieces) const {
    std::string text;
    if (!pieces.empty() && !spm_.Decode(pieces, &text).ok()) {
      throw Error(ErrorKind::kInvalidInput, "SentencePiece could not decode the pieces");
    }
    return text;
  }

  // sp_model.encode(text[begin:end], out_type=str), then convert_tokens_to_ids.
  void encode_run(const TextPiece& piece, std::size_t begin, std::size_t end, Segment& out) const {
    if (begin >= end) return;
    std::string utf8;
    std::vector<std::uint32_t> char_at_byte;  // byte offset in `utf8` -> code point in piece
    for (std::size_t i = begin; i < end; ++i) {
      const std::size_t before = utf8.size();
      unicode::append_utf8(piece.text[i], utf8);
      char_at_byte.insert(char_at_byte.end(), utf8.size() - before, static_cast<std::uint32_t>(i));
    }
    char_at_byte.push_back(static_cast<std::uint32_t>(end));
    const auto spt = spm_.EncodeAsImmutableProto(utf8);
    const std::size_t count = spt.pieces_size();
    // The converted fast tokenizer's Metaspace pre-tokenizer starts a word at every "▁" (and
    // each run between added tokens or punctuation is a split of its own).
    out.end_word();
    for (std::size_t k = 0; k < count; ++k) {
      const auto sp = spt.pieces(static_cast<int>(k));
      if (sp.piece().rfind(kSpace, 0) == 0) out.end_word();
      const std::int32_t id = convert(sp.piece(), static_cast<int>(sp.id()));
      // Offsets: the original code points the piece's surface covers (an empty surface, such
      // as a lone "▁" that the model prepends, gets an empty span where it stands).
      const std::uint32_t first = char_at_byte[std::min<std::size_t>(sp.begin(), utf8.size())];
      const std::uint32_t last = char_at_byte[std::min<std::size_t>(sp.end(), utf8.size())];
      std::uint32_t start =
          first < piece.source.size() ? piece.source[first] : piece.source.back() + 1;
      std::uint32_t stop = start;
      if (last > first) stop = piece.source[last - 1] + 1;
      out.push(id, id_to_token(id), start, stop);
    }
  }

  std::int32_t convert(const std::string& piece, int spm_id) const {
    if (flavor_ != Flavor::kDebertaV2) {
      if (auto id = added_token_id(piece)) return *id;
      if (auto it = fairseq_.find(piece); it != fairseq_.end()) return it->second;
      // `spm_id + fairseq_offset if spm_id else unk_token_id`; the model's unk id is 0.
      return spm_id != 0 ? spm_id + fairseq_offset_ : unk_id();
    }
    if (spm_id == spm_.unk_id() || piece == "<unk>") return deberta_unk_id_;
    if (auto id = added_token_id(piece)) return *id;
    return spm_id;
  }

  std::string id_to_token(std::int32_t id) const {
    if (auto it = added_tokens_by_id_.find(id); it != added_tokens_by_id_.end()) return it->second;
    return base_id_to_token(id);
  }

  // CamembertTokenizer.__init__: its five added tokens take ids 0-4 over whatever the files
  // say for those ids (pad and unk keep the flags their files give them), and its
  // additional_special_tokens default to the three NOTUSED ones.
  static void add_camembert_tokens(slow::SlowConfig& config) {
    auto& added = config.added_tokens;
    added.erase(std::remove_if(added.begin(), added.end(),
                               [](const slow::AddedTokenSpec& t) { return t.id >= 0 && t.id < 5; }),
                added.end());
    const std::string contents[] = {kCamembertUnused[0], *config.pad_token, kCamembertUnused[1],
                                    *config.unk_token, kCamembertUnused[2]};
    for (std::int32_t id = 0; id < 5; ++id) {
      slow::AddedTokenSpec spec;
      spec.content = contents[id];
      spec.special = true;
      for (const auto& flagged : config.special_token_flags) {
        if (flagged.content == spec.content) spec = flagged;
      }
      spec.id = id;
      added.push_back(spec);
    }
    if (config.additional_special_tokens.empty()) {
      config.additional_special_tokens.assign(std::begin(kCamembertUnused),
                                              std::end(kCamembertUnused));
    }
  }

  sentencepiece::SentencePieceProcessor spm_;
  Flavor flavor_ = Flavor::kXlmRoberta;
  int spm_size_ = 0;
  std::int32_t fairseq_offset_ = 0;  // DeBERTa's ids are SentencePiece's own
  bool do_lower_case_ = false;
  bool split_by_punct_ = false;
  std::int32_t deberta_unk_id_ = 0;
  slow::StringMap<std::int32_t> fairseq_;
  std::unordered_map<std::int32_t, std::string> added_tokens_by_id_;
};

}  // namespace

std::unique_ptr<Tokenizer> load_sentencepiece_tokenizer(const fs::path& model_dir,
                                                        const fs::path& spm_model) {
  return std::make_unique<SentencePieceTokenizer>(model_dir, spm_model);
}

}  // namespace onepass::tokenizer

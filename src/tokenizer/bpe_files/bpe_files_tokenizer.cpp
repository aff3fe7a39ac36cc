// The byte-level BPE source: a folder with vocab.json and merges.txt and no tokenizer.json (what
// microsoft/deberta-large-mnli and older RoBERTa checkpoints ship). transformers' AutoTokenizer
// loads such a folder as a fast tokenizer converted from the slow one
// (convert_slow_tokenizer.py, v4.47.1): a BPE model over vocab.json and the merges, the
// ByteLevel pre-tokenizer and decoder, the class's post-processor, and the slow tokenizer's
// added tokens. This file writes that tokenizer.json document and loads it as any other, so the
// ids are what AutoTokenizer gives (and TEI, had it a tokenizer.json).
//   RobertaTokenizer, BartTokenizer, LongformerTokenizer: RobertaProcessing (cls, sep,
//     add_prefix_space, trim_offsets of tokenizer_config.json, defaults false / true);
//   DebertaTokenizer: TemplateProcessing "[CLS]:0 $A:0 [SEP]:0" / "... $B:1 [SEP]:1".
// The class comes from tokenizer_config.json's tokenizer_class, else from config.json's
// model_type (as AutoTokenizer picks it).
#include <algorithm>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "base/error.h"
#include "base/read_file.h"
#include "tokenizer/hf_json/json_util.h"
#include "tokenizer/hf_json/model.h"
#include "tokenizer/hf_json/tokenizer_json.h"
#include "tokenizer/slow/slow_config.h"
#include "tokenizer/sources.h"

namespace onepass::tokenizer {
namespace {

namespace fs = std::filesystem;
using hf_json::Json;

enum class Converter { kRoberta, kDeberta };

std::string read_text(const fs::path& file) { return read_file(file, kTokenizerFileLimitBytes); }

Converter pick_converter(const fs::path& model_dir, const slow::SlowConfig& config) {
  std::string cls = config.tokenizer_class;
  if (cls.size() > 4 && cls.compare(cls.size() - 4, 4, "Fast") == 0) cls.resize(cls.size() - 4);
  if (cls == "RobertaTokenizer" || cls == "BartTokenizer" || cls == "LongformerTokenizer")
    return Converter::kRoberta;
  if (cls == "DebertaTokenizer") return Converter::kDeberta;
  std::string named = cls.empty() ? "none named" : cls;
  if (cls.empty() && fs::is_regular_file(model_dir / "config.json")) {
    const Json model_config =
        Json::parse(read_file(model_dir / "config.json", kSettingsFileLimitBytes), nullptr, false);
    const std::string type = model_config.is_object() && model_config.contains("model_type") &&
                                     model_config["model_type"].is_string()
                                 ? model_config["model_type"].get<std::string>()
                                 : "";
    if (type == "roberta" || type == "bart" || type == "longformer") return Converter::kRoberta;
    if (type == "deberta") return Converter::kDeberta;
    if (!type.empty()) named = "none named, model_type " + type;
  }
  throw Error(ErrorKind::kUnsupported,
              "vocab.json + merges.txt: tokenizer class " + named +
                  " is not supported (RobertaTokenizer, BartTokenizer, LongformerTokenizer, "
                  "DebertaTokenizer; or give the folder a tokenizer.json)");
}

// The slow tokenizers read merges.txt as read().split("\n")[1:-1]: the first line (the
// "#version" header) and whatever follows the last newline are dropped, each other line is
// split on white space into a pair; bpe_ranks keeps the first place of a repeated pair.
Json read_merges(const fs::path& file) {
  const std::string text = read_text(file);
  std::vector<std::string> lines;
  std::size_t start = 0;
  for (std::size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1)
    lines.push_back(text.substr(start, end - start));
  Json merges = Json::array();
  std::set<std::pair<std::string, std::string>> seen;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    std::istringstream parts(lines[i]);
    std::string first, second, extra;
    if (!(parts >> first >> second) || (parts >> extra)) {
      throw Error(ErrorKind::kInvalidModel, "merges.txt line " + std::to_string(i + 1) +
                                                " is not two symbols separated by a space");
    }
    if (seen.emplace(first, second).second) merges.push_back(Json::array({first, second}));
  }
  return merges;
}

Json added_token_json(const slow::AddedTokenSpec& t) {
  return Json{{"id", t.id},          {"content", t.content}, {"single_word", t.single_word},
              {"lstrip", t.lstrip},  {"rstrip", t.rstrip},   {"normalized", t.normalized},
              {"special", t.special}};
}

}  // namespace

std::unique_ptr<Tokenizer> load_bpe_files_tokenizer(const fs::path& model_dir,
                                                    const fs::path& vocab_json) {
  const fs::path merges_txt = vocab_json.parent_path() / "merges.txt";
  if (!fs::is_regular_file(merges_txt))
    throw Error(ErrorKind::kNotFound, "vocab.json needs merges.txt beside it");
  Json vocab = Json::parse(read_text(vocab_json), nullptr, false);
  if (!vocab.is_object())
    throw Error(ErrorKind::kInvalidModel, "vocab.json is not a JSON object of token ids");
  // The ids the tokenizer.json loader takes, checked here because the added tokens are numbered
  // after the largest one first.
  std::int32_t next_id = 0;  // one past the largest id
  for (const auto& [token, id] : vocab.items()) {
    const std::int64_t value = id.is_number_integer() ? id.get<std::int64_t>() : -1;
    if (value < 0 || value > hf_json::kMaxVocabId)
      throw Error(ErrorKind::kInvalidModel, "vocab.json: the id of " + token +
                                                " is not an integer from 0 to " +
                                                std::to_string(hf_json::kMaxVocabId));
    next_id = std::max(next_id, static_cast<std::int32_t>(value) + 1);
  }

  slow::SlowConfig config = slow::read_slow_config(model_dir);
  const Converter converter = pick_converter(model_dir, config);
  const bool roberta = converter == Converter::kRoberta;
  // The classes' constructor defaults; both wrap a plain-string mask token as
  // AddedToken(lstrip=True).
  for (auto [attribute, roberta_value, deberta_value] :
       {std::tuple{&config.bos_token, "<s>", "[CLS]"},
        {&config.eos_token, "</s>", "[SEP]"},
        {&config.sep_token, "</s>", "[SEP]"},
        {&config.cls_token, "<s>", "[CLS]"},
        {&config.unk_token, "<unk>", "[UNK]"},
        {&config.pad_token, "<pad>", "[PAD]"},
        {&config.mask_token, "<mask>", "[MASK]"}}) {
    slow::default_special_token(*attribute, roberta ? roberta_value : deberta_value);
  }
  slow::AddedTokenSpec mask{*config.mask_token, -1, true, false, false, false, true};
  config.special_token_flags.insert(config.special_token_flags.begin(), mask);
  const auto base_id = [&](std::string_view token) -> std::optional<std::int32_t> {
    const auto it = vocab.find(std::string(token));
    if (it == vocab.end()) return std::nullopt;
    return it->get<std::int32_t>();
  };
  slow::finalize_added_tokens(config, base_id, next_id);
  // convert_tokens_to_ids: the added tokens (every special token is one now), then vocab.json,
  // then the unknown token's id there.
  const auto id_of = [&](const std::string& token) -> std::int32_t {
    for (const auto& t : config.added_tokens)
      if (t.content == token) return t.id;
    if (auto id = base_id(token)) return *id;
    if (auto id = base_id(*config.unk_token)) return *id;
    throw Error(ErrorKind::kInvalidModel,
                "vocab.json has no id for " + token + " nor for " + *config.unk_token);
  };

  Json doc;
  doc["version"] = "1.0";
  doc["truncation"] = nullptr;
  doc["padding"] = nullptr;
  doc["added_tokens"] = Json::array();
  for (const auto& t : config.added_tokens) doc["added_tokens"].push_back(added_token_json(t));
  doc["normalizer"] = nullptr;
  const bool add_prefix_space = config.add_prefix_space.value_or(false);
  const bool trim_offsets = config.trim_offsets.value_or(true);
  doc["pre_tokenizer"] = {{"type", "ByteLevel"},
                          {"add_prefix_space", add_prefix_space},
                          {"trim_offsets", true},
                          {"use_regex", true}};
  if (roberta) {
    doc["post_processor"] = {{"type", "RobertaProcessing"},
                             {"sep", Json::array({*config.sep_token, id_of(*config.sep_token)})},
                             {"cls", Json::array({*config.cls_token, id_of(*config.cls_token)})},
                             {"trim_offsets", trim_offsets},
                             {"add_prefix_space", add_prefix_space}};
  } else {
    // DebertaConverter names [CLS] and [SEP] themselves, whatever the config's tokens are.
    const auto special = [](const char* token, int type_id) {
      return Json{{"SpecialToken", {{"id", token}, {"type_id", type_id}}}};
    };
    const auto sequence = [](const char* name, int type_id) {
      return Json{{"Sequence", {{"id", name}, {"type_id", type_id}}}};
    };
    Json special_tokens = Json::object();
    for (const char* token : {"[CLS]", "[SEP]"}) {
      special_tokens[token] = {
          {"id", token}, {"ids", Json::array({id_of(token)})}, {"tokens", Json::array({token})}};
    }
    doc["post_processor"] = {
        {"type", "TemplateProcessing"},
        {"single", Json::array({special("[CLS]", 0), sequence("A", 0), special("[SEP]", 0)})},
        {"pair", Json::array({special("[CLS]", 0), sequence("A", 0), special("[SEP]", 0),
                              sequence("B", 1), special("[SEP]", 1)})},
        {"special_tokens", special_tokens}};
  }
  doc["decoder"] = {{"type", "ByteLevel"},
                    {"add_prefix_space", true},
                    {"trim_offsets", true},
                    {"use_regex", true}};
  doc["model"] = {{"type", "BPE"},
                  {"dropout", nullptr},
                  {"unk_token", nullptr},
                  {"continuing_subword_prefix", ""},
                  {"end_of_word_suffix", ""},
                  {"fuse_unk", false},
                  {"byte_fallback", false},
                  {"ignore_merges", false},
                  {"vocab", std::move(vocab)},
                  {"merges", read_merges(merges_txt)}};
  try {
    return hf_json::make_tokenizer_json(doc, "bpe_files");
  } catch (const Error& e) {
    // The tokenizer.json loader's checks name its fields; say which files they came from.
    throw Error(e.kind(), std::string("vocab.json + merges.txt (as the tokenizer.json ") +
                              "transformers converts them to): " + e.what());
  }
}

}  // namespace onepass::tokenizer

#include "model/architectures/gliner/gliner.h"

#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/error.h"
#include "base/read_file.h"
#include "model/architectures/architectures.h"
#include "model/heads/span_head.h"
#include "weights/config.h"

namespace onepass::model {
namespace {

namespace fs = std::filesystem;

constexpr const char* kConfigFile = "gliner_config.json";
// Where GLiNER's Encoder keeps the backbone (gliner/modeling/encoder.py:
// token_rep_layer = Encoder, .bert_layer = Transformer, .model = the transformers model).
constexpr const char* kBackbonePrefix = "token_rep_layer.bert_layer.model.";

[[noreturn]] void unsupported(const std::string& what) {
  throw Error(ErrorKind::kUnsupported,
              std::string(kConfigFile) + ": " + what +
                  "; onepass serves GLiNER's uni-encoder span models (span_mode markerV0 or "
                  "marker)");
}

// The backbone's base-model class, from encoder_config's model_type when it names no
// architecture (GLiNER saves AutoConfig's dict, whose "architectures" is null).
std::string backbone_architecture(const std::string& model_type) {
  static const std::pair<const char*, const char*> kByType[] = {
      {"deberta-v2", "DebertaV2Model"},
      {"deberta", "DebertaModel"},
      {"bert", "BertModel"},
      {"roberta", "RobertaModel"},
      {"xlm-roberta", "XLMRobertaModel"},
      {"electra", "ElectraModel"},
      {"modernbert", "ModernBertModel"},
  };
  for (const auto& [type, name] : kByType)
    if (model_type == type) return name;
  unsupported("the backbone's model_type '" + model_type.substr(0, 40) +
              "' is not one onepass runs");
}

std::mutex finder_mutex;
BackboneConfigFinder& finder() {
  static BackboneConfigFinder instance;
  return instance;
}

// The config.json of the backbone model_name names, for a gliner_config.json without
// encoder_config (gliner/modeling/encoder.py: AutoConfig.from_pretrained(model_name)): a local
// folder's, else the finder's.
std::string backbone_config_of(const std::string& model_name) {
  const std::string shown = model_name.substr(0, 80);
  const std::string missing = std::string(kConfigFile) +
                              " has no encoder_config and the folder no config.json: the "
                              "backbone's config.json (model_name '" +
                              shown + "')";
  if (model_name.empty())
    throw Error(ErrorKind::kInvalidModel, std::string(kConfigFile) +
                                              " has no encoder_config, no model_name and the "
                                              "folder no config.json: the backbone is not "
                                              "described");
  std::error_code ec;
  if (fs::is_directory(model_name, ec)) {
    if (auto text =
            read_file_if_present(fs::path(model_name) / "config.json", kSettingsFileLimitBytes))
      return *text;
    throw Error(ErrorKind::kNotFound, missing + " is not in that folder");
  }
  BackboneConfigFinder find;
  {
    std::lock_guard lock(finder_mutex);
    find = finder();
  }
  if (!find)
    throw Error(ErrorKind::kNotFound, missing + " is needed; put it in the folder as config.json");
  fs::path path;
  try {
    path = find(model_name);
  } catch (const Error& e) {
    throw Error(e.kind(), missing + " could not be read: " + e.what() +
                              "; or put it in the folder as config.json");
  }
  auto text = read_file_if_present(path, kSettingsFileLimitBytes);
  if (!text) throw Error(ErrorKind::kNotFound, missing + " is not at " + path.string());
  return *text;
}

struct GlinerConfig {
  heads::SpanHeadConfig head;
  SpanExtractionInfo span;
  weights::ModelConfig backbone;
  int vocab_size = -1;
};

GlinerConfig read_gliner_config(const fs::path& dir) {
  const auto text = read_file_if_present(dir / kConfigFile, kSettingsFileLimitBytes);
  if (!text) throw Error(ErrorKind::kNotFound, "the model folder has no gliner_config.json");
  const weights::ConfigFields f(*text);
  std::string model_type;
  f.read("model_type", model_type);
  if (model_type.find("relex") != std::string::npos || f.holds_string("relations_layer"))
    unsupported("relation extraction models (GLiNER relex) are not supported");
  if (f.holds_string("labels_encoder"))
    unsupported("bi-encoder models (labels_encoder) are not supported");
  if (f.holds_string("labels_decoder"))
    unsupported("models with a label decoder (labels_decoder) are not supported");

  GlinerConfig c;
  std::string span_mode = "markerV0";
  f.read("span_mode", span_mode);
  if (span_mode == "markerV0") {
    c.head.span_mode = heads::SpanMode::kMarkerV0;
  } else if (span_mode == "marker") {
    c.head.span_mode = heads::SpanMode::kMarker;
  } else {
    unsupported("span_mode '" + span_mode.substr(0, 40) + "' is not supported");
  }
  std::string post_fusion, pooling = "first", splitter = "whitespace";
  bool fuse_layers = false;
  f.read("post_fusion_schema", post_fusion);
  f.read("fuse_layers", fuse_layers);
  f.read("subtoken_pooling", pooling);
  f.read("words_splitter_type", splitter);
  if (!post_fusion.empty()) unsupported("post_fusion_schema is not supported");
  if (fuse_layers) unsupported("fuse_layers is not supported");
  if (pooling != "first") unsupported("subtoken_pooling '" + pooling.substr(0, 40) + "'");
  if (splitter != "whitespace")
    unsupported("words_splitter_type '" + splitter.substr(0, 40) + "' (whitespace is)");

  // BaseGLiNERConfig's defaults (gliner/config.py).
  c.head.max_width = 12;
  c.head.hidden_size = 512;
  c.span.max_words = 384;
  c.span.max_types = 25;
  c.span.entity_token = "<<ENT>>";
  c.span.separator_token = "<<SEP>>";
  f.read("max_width", c.head.max_width);
  f.read("hidden_size", c.head.hidden_size);
  f.read("num_rnn_layers", c.head.num_rnn_layers);
  f.read("embed_ent_token", c.head.embed_ent_token);
  int class_token_index = -1;
  f.read("class_token_index", class_token_index);
  f.read("max_len", c.span.max_words);
  f.read("max_types", c.span.max_types);
  f.read("ent_token", c.span.entity_token);
  f.read("sep_token", c.span.separator_token);
  f.read("model_name", c.span.backbone);
  f.read("vocab_size", c.vocab_size);
  if (c.head.max_width < 1 || c.head.max_width > 64 || c.head.hidden_size < 2 ||
      c.span.max_words < 1 || class_token_index < 0 || c.head.num_rnn_layers < 0 ||
      c.head.num_rnn_layers > 8)
    throw Error(ErrorKind::kInvalidModel,
                std::string(kConfigFile) +
                    ": max_width (1-64), hidden_size, max_len, class_token_index and "
                    "num_rnn_layers must be set and in range");
  c.head.class_token_index = class_token_index;
  c.span.span_mode = span_mode;
  c.span.max_width = c.head.max_width;
  c.span.entity_token_id = class_token_index;

  // The backbone's config: encoder_config, else the folder's config.json, else model_name's.
  std::optional<std::string> backbone = f.object_text("encoder_config");
  if (!backbone) backbone = read_file_if_present(dir / "config.json", kSettingsFileLimitBytes);
  if (!backbone) backbone = backbone_config_of(c.span.backbone);
  // Read as the family's base model, whatever head the backbone was saved with: GLiNER takes
  // its last hidden states.
  weights::ModelConfig parsed = weights::parse_pretrained_config(*backbone);
  parsed.architectures = {backbone_architecture(parsed.model_type)};
  c.backbone = complete_model_config(std::move(parsed));
  if (c.vocab_size > 0) c.backbone.vocab_size = c.vocab_size;  // resized for GLiNER's tokens
  return c;
}

ModelInfo gliner_info(const GlinerConfig& c, const ModelInfo& backbone) {
  ModelInfo info = backbone;
  info.architecture = "GLiNER (" + c.span.span_mode + ", backbone " + backbone.architecture + ")";
  info.head = HeadKind::kSpanExtraction;
  info.span = c.span;
  return info;
}

class GlinerEncoder final : public Encoder {
 public:
  GlinerEncoder(std::unique_ptr<Encoder> backbone, heads::SpanHead head, ModelInfo info)
      : backbone_(std::move(backbone)), head_(std::move(head)), info_(std::move(info)) {}

  const ModelInfo& info() const override { return info_; }

  void forward(std::span<const SequenceInput> batch, ForwardOutput& out) const override {
    std::vector<SequenceInput> plain(batch.begin(), batch.end());
    for (auto& s : plain) {
      s.vocab_logit_positions = {};
      s.word_positions = {};
    }
    ForwardOutput states;
    backbone_->forward(plain, states);
    const auto hidden = static_cast<std::size_t>(backbone_->info().hidden_size);
    out.logits.clear();
    out.position_logits.clear();
    out.pooler_output.clear();
    out.hidden_states.clear();
    out.token_offsets = states.token_offsets;
    out.span_offsets.assign(1, 0);
    for (std::size_t i = 0; i < batch.size(); ++i) {
      const float* tokens = states.hidden_states.data() + states.token_offsets[i] * hidden;
      for (std::int32_t p : batch[i].word_positions) {
        if (p < 0 || static_cast<std::size_t>(p) >= batch[i].input_ids.size())
          throw Error(ErrorKind::kInvalidInput, "a word position outside its sequence");
      }
      head_.score(tokens, batch[i].input_ids, batch[i].word_positions, out.logits);
      out.span_offsets.push_back(out.logits.size());
    }
  }

 private:
  std::unique_ptr<Encoder> backbone_;
  heads::SpanHead head_;
  ModelInfo info_;
};

}  // namespace

void set_backbone_config_finder(BackboneConfigFinder find) {
  std::lock_guard lock(finder_mutex);
  finder() = std::move(find);
}

bool is_gliner_folder(const fs::path& model_dir) {
  std::error_code ec;
  return fs::is_regular_file(model_dir / kConfigFile, ec);
}

ModelInfo describe_gliner(const fs::path& model_dir) {
  const GlinerConfig c = read_gliner_config(model_dir);
  return gliner_info(c, describe_checkpoint(c.backbone));
}

std::unique_ptr<Encoder> load_gliner(const fs::path& model_dir, const LoadOptions& options) {
  // bf16 / int8 run the backbone's products in that precision; the span head (its LSTM and
  // MLPs, small next to the backbone) stays fp32. The gate that proves a precision on a GLiNER
  // model compares entities on its prompts, which only the runtime builds (--precision auto):
  // load_encoder's gate on plain texts cannot judge it, so a precision asked for outright must
  // be forced.
  if (options.precision != Precision::kFp32 && !options.force_precision)
    throw Error(ErrorKind::kUnsupported,
                std::string("GLiNER models run ") + precision_name(options.precision) +
                    " only when --precision auto's gate proves it on their entities (or with "
                    "--force-precision)");
  GlinerConfig c = read_gliner_config(model_dir);
  const weights::ModelConfig& backbone = c.backbone;
  c.head.backbone_hidden = backbone.hidden_size;
  weights::WeightStore store = weights::WeightStore::open(model_dir);
  heads::SpanHead head(store, c.head);
  const std::int64_t parameters = store.parameter_count();
  store.strip_prefix(kBackbonePrefix);
  const Architecture* architecture = find_architecture(backbone.architectures.front());
  ONEPASS_CHECK(architecture != nullptr, "a backbone from the architecture table");
  LoadOptions backbone_options = options;
  backbone_options.check_tokenizer = {};
  auto encoder = architecture->family->load(backbone, std::move(store), backbone_options);
  ModelInfo info = gliner_info(c, encoder->info());
  info.parameter_count = parameters;
  return std::make_unique<GlinerEncoder>(std::move(encoder), std::move(head), std::move(info));
}

}  // namespace onepass::model

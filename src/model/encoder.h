// The engine's interface: a loaded encoder checkpoint that runs one padding-free forward pass
// over a ragged batch. Sequences are packed token-major ([total_tokens, hidden]) for every
// dense layer; attention runs per sequence. One Encoder is shared by all requests: forward()
// is const and safe to call from several threads at once.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/precision.h"
#include "weights/config.h"

namespace onepass::model {

using Precision = kernels::Precision;  // kernels/precision.h: the one Precision type

// What the checkpoint's head produces.
enum class HeadKind {
  kSequenceClassification,  // logits [num_labels]; num_labels 1 is a reranker / scorer
  kBaseModel,               // last hidden state per token (+ BertPooler output when present)
  kTokenClassification,     // logits [num_labels] for every token (*ForTokenClassification)
  kMaskedLm,                // *ForMaskedLM: per sequence the SPLADE vector (logits [vocab_size],
                            // max over its tokens of log(1 + relu(MLM logit))), or the MLM
                            // logits at the positions it names (fill-mask; masked_lm_head.h)
  kQuestionAnswering,       // *ForQuestionAnswering: [start, end] logits for every token
  kSpanExtraction,          // GLiNER (gliner_config.json): a logit per (span, label) of a text's
                            // words against the labels of its prompt (heads/span_head.h)
};

// Heads whose logits are per token ([total_tokens, num_labels]); question answering's two
// "labels" are the start and end logits.
inline bool per_token_head(HeadKind head) {
  return head == HeadKind::kTokenClassification || head == HeadKind::kQuestionAnswering;
}

// GLiNER's gliner_config.json, what the runtime needs to build a request's sequence and read its
// spans back (architectures/gliner).
struct SpanExtractionInfo {
  std::string span_mode;              // "markerV0", "marker"
  int max_width = 0;                  // words per span
  int max_words = 0;                  // max_len: the words of a text GLiNER looks at
  int max_types = 0;                  // max_types: the labels it was trained with per text
  std::int32_t entity_token_id = -1;  // class_token_index: <<ENT>>
  std::string entity_token;           // ent_token, "<<ENT>>"
  std::string separator_token;        // sep_token, "<<SEP>>"
  std::string backbone;               // model_name, as the config names it
};

struct ModelInfo {
  std::string
      architecture;  // config.json "architectures"[0], e.g. "DebertaV2ForSequenceClassification"
  std::string model_type;  // "bert", "xlm-roberta", "roberta", "deberta-v2"
  HeadKind head = HeadKind::kBaseModel;
  int hidden_size = 0;
  int num_labels = 0;                    // 0 for base models
  std::vector<std::string> id2label;     // index = class id; from config.json id2label
  std::string problem_type;              // config.json problem_type ("" when absent)
  bool multi_label = false;              // problem_type == "multi_label_classification"
  std::string cross_encoder_activation;  // weights::ModelConfig's ("" when absent)
  int max_tokens = 0;                    // longest sequence the position table allows
  int vocab_size = 0;
  int type_vocab_size = 0;  // 0: token_type_ids are ignored
  bool has_pooler = false;  // BertPooler weights present (base models)
  std::int64_t parameter_count = 0;
  SpanExtractionInfo span;  // kSpanExtraction
};

struct SequenceInput {
  std::span<const std::int32_t> input_ids;
  std::span<const std::int32_t> token_type_ids;  // empty means all zeros
  // kMaskedLm: positions (token indices) whose vocabulary logits this sequence wants, as the
  // fill-mask pipeline wants its mask tokens'; empty: the sequence's SPLADE vector instead.
  std::span<const std::int32_t> vocab_logit_positions{};
  // kSpanExtraction: the token index of each word's first sub-token, in word order.
  std::span<const std::int32_t> word_positions{};
};

struct ForwardOutput {
  // kSequenceClassification: [num_sequences, num_labels], row-major.
  // kTokenClassification: [total_tokens, num_labels], token-major like hidden_states.
  // kQuestionAnswering: [total_tokens, 2] as kTokenClassification: start, end logit per token.
  // kMaskedLm: [num_sequences, vocab_size], row-major, the SPLADE vectors (all 0 for a
  // sequence with vocab_logit_positions).
  std::vector<float> logits;
  // kMaskedLm: [positions, vocab_size], the MLM logits at every sequence's
  // vocab_logit_positions, in batch order and then in the order each sequence lists them.
  std::vector<float> position_logits;
  // kBaseModel: last hidden state, token-major [total_tokens, hidden] in batch order;
  // sequence i owns rows [token_offsets[i], token_offsets[i + 1]) (of logits too, for the
  // per-token heads). Every head fills token_offsets.
  std::vector<float> hidden_states;
  std::vector<std::size_t> token_offsets;
  // kBaseModel with a pooler: [num_sequences, hidden] (tanh(dense(cls))).
  std::vector<float> pooler_output;
  // kSpanExtraction: sequence i's logits are logits[span_offsets[i], span_offsets[i + 1]),
  // [words, max_width, labels] (heads/span_head.h).
  std::vector<std::size_t> span_offsets;
};

// Token ids of one text (and optional pair), as the model's tokenizer makes them.
struct TokenizedText {
  std::vector<std::int32_t> input_ids;
  std::vector<std::int32_t> token_type_ids;
};
using TextTokenizer =
    std::function<TokenizedText(std::string_view text, std::optional<std::string_view> pair)>;

struct LoadOptions {
  int threads = 0;  // 0: all cores
  // bf16 / int8 run the encoder layers' matrix products in that precision, and attention's
  // products in bf16 with fp32 accumulation (bf16: all of them; int8: DeBERTa's P·V and relative
  // products); LayerNorm, softmax, GELU and the heads stay fp32.
  Precision precision = Precision::kFp32;
  // bf16 / int8 only: unless set, load_encoder compares the model with its fp32 twin on the
  // built-in check set (model/precision_check.h) and throws kInvalidModel, naming the criterion
  // missed, when the precision fails docs/reliability.md's bar for this model.
  bool force_precision = false;
  // Tokenizes the built-in check texts for that comparison; unset: synthetic token ids.
  TextTokenizer check_tokenizer{};
};

class Encoder {
 public:
  virtual ~Encoder() = default;
  virtual const ModelInfo& info() const = 0;
  // Throws onepass::Error(kInvalidInput) for an id outside the vocabulary, an empty sequence or
  // more tokens than info().max_tokens; nothing is computed then.
  virtual void forward(std::span<const SequenceInput> batch, ForwardOutput& out) const = 0;
};

// The config.json "architectures" names load_encoder accepts, in its table's order
// (architectures/table.cpp).
const std::vector<std::string>& supported_architectures();
bool is_supported_architecture(std::string_view name);

// DIR/config.json parsed once: the PretrainedConfig fields (weights::load_pretrained_config),
// an architecture outside the table refused (kUnsupported, listing the supported ones), then the
// family's config class defaults and fields (ArchitectureFamily::read_config) and the size
// checks (kInvalidModel). The one reader of config.json for load_encoder and the runtime's model
// description; kNotFound without config.json.
weights::ModelConfig read_model_config(const std::filesystem::path& model_dir);

// The same for config.json text.
weights::ModelConfig parse_model_config(std::string_view json_text);

// What a checkpoint serves, from its parsed config.json alone: architecture, head (from the
// architecture table), labels, problem_type, the position limit and the vocabulary sizes. Every
// loader starts its ModelInfo from this, and the runtime describes a model folder with it before
// loading, so the description before and after load cannot disagree. Throws onepass::Error:
// kUnsupported (an architecture outside the table, listing the supported ones), kInvalidModel (a
// classifier without labels, a RoBERTa position table that padding leaves empty).
ModelInfo describe_checkpoint(const weights::ModelConfig& config);

// The folder is a GLiNER checkpoint (holds gliner_config.json; architectures/gliner).
bool is_gliner_folder(const std::filesystem::path& model_dir);

// What the folder serves: describe_checkpoint(read_model_config(dir)), or for a GLiNER folder
// (gliner_config.json) its span-extraction description (architectures/gliner). The runtime
// describes a folder before load with this.
ModelInfo describe_model_folder(const std::filesystem::path& model_dir);

// Reads config.json and the weights (model.safetensors or its sharded index, else
// pytorch_model.bin or its index: weights::WeightStore::open) from a Hugging Face model folder.
// Throws onepass::Error: kNotFound (missing files), kInvalidModel (broken weight file, a pickle
// global outside the weights-only set, shape mismatch, NaN/Inf weights), kUnsupported
// (architecture, listing the supported ones).
std::unique_ptr<Encoder> load_encoder(const std::filesystem::path& model_dir,
                                      const LoadOptions& options = {});

}  // namespace onepass::model

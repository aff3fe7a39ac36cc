// The one interface between the HTTP dialects (src/api) and the engine side (src/runtime).
// A dialect parses its JSON into an InferenceRequest, submits it, and maps the InferenceResult
// (or the onepass::Error it carries) back to its own JSON. Nothing below this interface sees
// JSON or HTTP; nothing above it sees tokenizers' or encoders' internals.
#pragma once

#include <chrono>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/encoder.h"
#include "model/heads/dense_module.h"
#include "model/heads/postprocess.h"
#include "model/heads/token_classification.h"
#include "tokenizer/tokenizer.h"
#include "trace/context.h"

namespace onepass::runtime {

// What a model folder serves, from its config.json (docs/api.md "Choosing the model").
enum class ModelTask {
  kClassifier,        // *ForSequenceClassification with 2+ labels
  kReranker,          // *ForSequenceClassification with 1 label
  kEmbedder,          // base model
  kTokenClassifier,   // *ForTokenClassification: labels per token (NER, PII)
  kMaskedLm,          // *ForMaskedLM: fill-mask, and SPLADE: one [vocab] vector per input
                      // (mostly 0)
  kQuestionAnswerer,  // *ForQuestionAnswering: a start and an end logit per token (extractive QA)
  kSpanExtractor,     // GLiNER (gliner_config.json): entities of the labels a request names
};

using Pooling = model::heads::Pooling;  // cls or mean (postprocess.h)

enum class ModelState { kUnloaded, kLoading, kReady, kFailed };

// The precision a loaded model runs in and how it was chosen (--precision, or auto:
// model/auto_precision.h, runtime/auto_precision.h).
struct PrecisionSelection {
  std::string precision;      // "fp32", "bf16", "int8"; empty until loaded
  std::string mode;           // what was asked: "fp32", "bf16", "int8" or "auto"
  std::string source;         // auto: "gate" (run at this load) or "cache" (a saved verdict)
  std::string verdict;        // auto: model::describe_verdict's line (figures, why refused)
  double choose_seconds = 0;  // auto: hashing the files plus the gate or the cache read
};

struct ModelDescription {
  std::string name;  // as given at --model NAME=DIR (or the folder's name)
  ModelTask task = ModelTask::kClassifier;
  ModelState state = ModelState::kUnloaded;
  std::string load_error;  // when kFailed; names the problem, never a full path
  model::ModelInfo info;   // valid once the config was read
  Pooling pooling = Pooling::kMean;
  int max_input_length = 0;  // tokens, special tokens included
  // Bytes per text (each side of a pair, each label), checked before anything is tokenized so
  // that a multi-megabyte string costs no tokenizer time, truncation or not. 0: no limit.
  std::size_t max_input_bytes = 0;
  // Rerankers: sentence-transformers' CrossEncoder activation from config.json (sigmoid when it
  // names none), which the toolkit's sentence-ranking and vLLM's /score apply; TEI and Cohere
  // answer the sigmoid whatever it says.
  model::heads::Activation cross_encoder_activation = model::heads::Activation::kSigmoid;
  // Zero-shot needs an entailment label; -1 when the model has none.
  int entailment_index = -1;
  int contradiction_index = -1;
  // sentence_bert_config.json's max_seq_length (0: none): max_input_length is at most this.
  int max_seq_length = 0;
  // Embedders: sentence-transformers' prompts by name (config_sentence_transformers.json) and
  // the text put before a single text whose request names none (--default-prompt, the prompt of
  // --default-prompt-name, else the config's default_prompt_name; nullopt: nothing).
  // runtime/prompts.h applies them.
  std::map<std::string, std::string> prompts;
  std::optional<std::string> default_prompt;
  std::string default_prompt_name;      // the name default_prompt came by; empty when given as text
  bool pooling_includes_prompt = true;  // 1_Pooling's include_prompt
  // Embedders: modules.json ends in a Normalize module, so sentence-transformers' encode()
  // answers unit vectors (the toolkit's sentence-embeddings task answers them so too).
  bool normalizes = false;
  // Embedders: the folder's sentence-transformers Dense modules (modules.json), in order: each
  // maps the pooled embedding onto its out_features before normalisation.
  std::vector<model::heads::DenseModuleConfig> dense_modules;
  // Masked-LM models: the tokenizer's mask token ("[MASK]", "<mask>"); empty when it has none.
  std::string mask_token;
  PrecisionSelection precision;  // set at load
};

// The width of a pooled embedding (kPooled): what the last Dense module gives, else the encoder's
// hidden size. `dimensions` and the like are bounded by it.
inline int embedding_size(const ModelDescription& description) {
  return description.dense_modules.empty() ? description.info.hidden_size
                                           : description.dense_modules.back().out_features;
}

// One input of a client batch: text (optionally a pair) or pre-tokenized ids (KServe tensors,
// OpenAI token arrays).
struct InferenceItem {
  std::string text;
  std::optional<std::string> text_pair;
  bool pretokenized = false;
  std::vector<std::int32_t> input_ids;       // when pretokenized
  std::vector<std::int32_t> token_type_ids;  // when pretokenized; empty = zeros
};

enum class OutputKind {
  kLogits,       // classifier / reranker: [num_labels]
  kPooled,       // embedder: [hidden], pooled with `pooling`
  kTokens,       // embedder: [num_tokens, hidden], token-major
  kTokenLogits,  // token classifier: [num_tokens, num_labels], token-major, with `encoding`;
                 // question answerer: [num_tokens, 2], each token's start and end logit
  kSparse,       // sparse embedder: [vocab_size], the SPLADE vector (model/layers/masked_lm_head.h)
  kFillMask,     // masked-LM model: ItemOutput::predictions for each mask token of a text
  kSpans,        // span extractor: [words, max_width, labels] logits, with ItemOutput::words
};

// GLiNER's predict_entities parameters (runtime/extract.h).
struct ExtractOptions {
  std::vector<std::string> labels;  // as the request gives them; duplicates count once
  float threshold = 0.5f;
  bool flat_ner = true;
  bool multi_label = false;
};

// The fill-mask pipeline's parameters (transformers' FillMaskPipeline).
struct FillMaskOptions {
  std::size_t top_k = 5;  // predictions per mask token (at most the number of targets)
  // When not empty, only these tokens are scored: a vocabulary token as written, else the first
  // token of its tokenization (the pipeline's get_target_ids).
  std::vector<std::string> targets;
};

// One prediction for one mask token.
struct MaskPrediction {
  float score = 0;  // softmax over the vocabulary at the mask token
  std::int32_t token = 0;
  std::string token_str;  // the token alone, decoded
  // The input with this token in the mask's place, decoded (special tokens left out when the
  // input has one mask, kept when it has several, as the pipeline does).
  std::string sequence;
};

// The last steps of the sentence-transformers pipeline for a pooled embedding (kPooled), after
// pooling and the folder's Dense modules, as the request asks: the first `dimensions` values
// (0: all of them; TEI's and OpenAI's `dimensions`, Cohere's `output_dimension`), then L2
// normalisation (the folder's Normalize module, or the route's own rule).
struct EmbeddingOptions {
  std::size_t dimensions = 0;
  bool normalize = false;
};

// What happens to a text input longer than the model's limit when truncation is off
// (docs/api.md "Long inputs").
enum class LongInput {
  kReject,  // kInvalidInput naming both token counts
  kChunk,   // split into overlapping windows of the limit, run, combined (runtime/windows.h)
};

// Which text of a pair kChunk splits; a single text is always the first.
enum class ChunkedText {
  kFirst,   // premise, zero-shot's sequence: the second text whole in every window
  kSecond,  // a reranker's document: the query (first) whole in every window
};

struct InferenceRequest {
  std::string model;  // empty selects the only model when one is loaded
  std::vector<InferenceItem> items;
  OutputKind output = OutputKind::kLogits;
  std::optional<Pooling> pooling;  // kPooled; default: the model's
  bool truncate = false;           // false: an over-long input is a kInvalidInput error
  tokenizer::TruncationDirection truncation_direction = tokenizer::TruncationDirection::kRight;
  tokenizer::TruncationStrategy truncation_strategy = tokenizer::TruncationStrategy::kLongestFirst;
  std::size_t max_length = 0;  // 0: the model's max_input_length
  // kChunk applies to text inputs with kLogits or kPooled output; the first text of a pair is
  // split, the second stays whole in every window. `stride` is the overlap in tokens between
  // consecutive windows (nullopt: an eighth of the room the first text has in a window).
  LongInput long_input = LongInput::kReject;
  std::optional<std::size_t> stride;
  ChunkedText chunked_text = ChunkedText::kFirst;
  // kChunk: at most this many windows per item, the first ones (0: no cap); the rest of the
  // text is not read (Cohere's max_chunks_per_doc).
  std::size_t max_windows_per_item = 0;
  // A prompt of the model's, by name, put before each single text (docs/api.md "Prompts");
  // nullopt: the model's default prompt, if it has one.
  std::optional<std::string> prompt_name;
  FillMaskOptions fill_mask;   // kFillMask
  EmbeddingOptions embedding;  // kPooled
  ExtractOptions extract;      // kSpans
  // kLogits: an activation applied to every logit, a chunked input's windows included (after
  // they were combined): a reranker's score as CrossEncoder.predict, TEI or Cohere give it.
  // nullopt: the logits as the model gave them.
  std::optional<model::heads::Activation> score_activation;
  // Set: when the caller stops waiting (a gRPC call's deadline). A request still queued then is
  // dropped before its forward pass and answered kDeadlineExceeded
  // (onepass_expired_requests_total counts them); one already running finishes.
  std::optional<std::chrono::steady_clock::time_point> deadline;
  // The request's span (set by the API when tracing is on): when it is sampled, the runtime
  // records its phases as children of it and links the forward passes it rode in to it.
  trace::SpanContext trace;
};

// A wall-clock deadline (a gRPC call's) as InferenceRequest::deadline: nullopt for none
// (time_point::max(), or further than a day away).
inline std::optional<std::chrono::steady_clock::time_point> steady_deadline(
    std::chrono::system_clock::time_point deadline) {
  const auto now = std::chrono::system_clock::now();
  if (deadline == std::chrono::system_clock::time_point::max() ||
      deadline - now > std::chrono::hours(24))
    return std::nullopt;
  return std::chrono::steady_clock::now() +
         std::chrono::duration_cast<std::chrono::steady_clock::duration>(deadline - now);
}

// One window of a chunked input: its output and its token count, special tokens included.
struct WindowOutput {
  std::vector<float> values;
  int num_tokens = 0;
};

struct ItemOutput {
  std::vector<float> values;  // see OutputKind
  int num_tokens = 0;         // tokens of this input after truncation, special tokens included
                              // (a chunked input: the sum over its windows)
  // A chunked input (more than one window): every window's output, in text order; `values`
  // then holds their combination (runtime/windows.h).
  std::vector<WindowOutput> windows;
  // kTokenLogits of a text input: its tokens, offsets and special-token mask (entity spans),
  // and how the model's tokenizer reads tokens back as text.
  tokenizer::Encoding encoding;
  model::heads::TokenTextStyle token_style;
  // kFillMask: for each mask token of the input, in text order, the top_k predictions, most
  // likely first.
  std::vector<std::vector<MaskPrediction>> predictions;
  // kSpans: the words the spans index, [start, end) in code points of the text.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> words;
};

struct InferenceTimings {
  std::chrono::nanoseconds tokenization{0};
  std::chrono::nanoseconds queue{0};
  std::chrono::nanoseconds inference{0};
  std::chrono::nanoseconds total{0};
};

struct InferenceResult {
  std::vector<ItemOutput> items;  // one per request item, in order
  InferenceTimings timings;
  std::size_t total_tokens = 0;
  std::exception_ptr error;  // an onepass::Error; `items` is empty then
};

using Completion = std::function<void(InferenceResult)>;

class InferenceService {
 public:
  virtual ~InferenceService() = default;

  virtual std::vector<ModelDescription> models() const = 0;
  // By name, or the only model when `name` is empty and exactly one is registered.
  virtual std::optional<ModelDescription> find_model(std::string_view name) const = 0;

  // Admission is decided here, on the caller's (I/O) thread, before any tokenization: throws
  // onepass::Error kOverloaded (in-flight limit or queue full; a client batch is admitted whole
  // or not at all), kNotFound (no such model), kUnavailable (draining, model failed). Otherwise
  // returns at once and `done` runs exactly once, later, on a runtime thread; it must not block.
  // Per-request failures (too many tokens, id outside the vocabulary, NaN output) arrive as
  // InferenceResult::error and never disturb other requests of the same batch.
  virtual void submit(InferenceRequest request, Completion done) = 0;

  // TEI /tokenize: synchronous, on the caller's thread. Throws like submit().
  virtual tokenizer::Encoding tokenize(std::string_view model, std::string_view text,
                                       std::optional<std::string_view> pair,
                                       bool add_special_tokens) const = 0;

  // TEI /decode: the model's tokenizer reads ids back as text (tokenizer::Tokenizer::decode,
  // without transformers' space cleanup, as TEI's tokenizers library answers). Synchronous, on
  // the caller's thread. Throws like tokenize(), and kInvalidInput for an id outside the
  // vocabulary.
  virtual std::string decode(std::string_view model, std::span<const std::int32_t> ids,
                             bool skip_special_tokens) const = 0;

  // SageMaker multi-model API (only when enabled). load_model throws kInvalidArgument when the
  // name is taken (409), else returns at once: the folder is read and loaded off the caller's
  // thread, and `done` runs once, on another thread, with null when the model serves or the
  // error: kNotFound (no such folder, 404), kInvalidModel or kUnsupported (not a servable model,
  // 400), std::bad_alloc (507), kUnavailable (--load-timeout passed, shutting down; 503).
  // unload_model throws kNotFound (404).
  using LoadDone = std::function<void(std::exception_ptr)>;
  virtual void load_model(const std::string& name, const std::filesystem::path& dir,
                          LoadDone done) = 0;
  virtual void unload_model(const std::string& name) = 0;

  // Readiness: every eagerly loaded model is ready and the service is not draining.
  virtual bool ready() const = 0;
  // SIGTERM: readiness turns false at once; queued and running work still completes.
  virtual void begin_drain() = 0;
  // Blocks until nothing is queued or running (or the timeout passes); true when idle.
  virtual bool wait_idle(std::chrono::milliseconds timeout) = 0;

  // Prometheus text exposition of every onepass_ metric (docs/api.md "Metrics").
  virtual std::string render_metrics() const = 0;
  // The HTTP layer reports each finished request here (route label, model, status code).
  virtual void record_http_request(std::string_view route, std::string_view model, int status,
                                   std::chrono::nanoseconds duration) = 0;
};

}  // namespace onepass::runtime

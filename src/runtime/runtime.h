// The concrete InferenceService: model registry and lifecycle, admission, tokenization on
// runtime threads, the dynamic batcher and the compute threads, metrics. `onepass serve` builds
// one Runtime from its flags (RuntimeOptions) and hands it to the HTTP dialects as an
// InferenceService.
//
// Threads: submit(), tokenize(), models(), find_model(), ready(), render_metrics() and
// record_http_request() are safe from any thread (the HTTP I/O threads). Completions run on a
// runtime thread. The destructor stops every thread; requests still queued then fail with
// kUnavailable.
#pragma once

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/auto_precision.h"
#include "model/encoder.h"
#include "runtime/auto_precision.h"
#include "runtime/model_name.h"
#include "runtime/serve_defaults.h"
#include "runtime/service.h"
#include "tokenizer/tokenizer.h"

namespace onepass::runtime {

// One `--model [NAME=]DIR` (DIR may be a Hub id until ModelLoaders::resolve turns it into
// a folder).
struct ModelSpec {
  std::string name;
  std::filesystem::path dir;
  // "DIR#auto", "DIR#int8": this model's precision, over RuntimeOptions' (a '#' because '@'
  // already names a Hub revision).
  std::optional<model::PrecisionMode> precision = std::nullopt;
};

// Parses "NAME=DIR" or "DIR" (the name is then the folder's name), each optionally ending in
// "#PRECISION" (fp32, bf16, int8 or auto). Throws kInvalidArgument when the name is not a valid
// model name or the precision is unknown.
ModelSpec parse_model_spec(std::string_view spec);

// How a model folder becomes an Encoder and a Tokenizer. Tests inject fakes; empty members use
// model::load_encoder and tokenizer::load_tokenizer.
struct ModelLoaders {
  // How a `--model` reference (a folder, or a Hub id that `serve` resolves through
  // hub::resolve_model) becomes a local folder, once when the model is registered. Empty: the
  // reference is the folder. Throws onepass::Error; the model is then registered as failed.
  std::function<std::filesystem::path(const std::string&)> resolve;
  std::function<std::unique_ptr<model::Encoder>(const std::filesystem::path&,
                                                const model::LoadOptions&)>
      encoder;
  std::function<std::unique_ptr<tokenizer::Tokenizer>(const std::filesystem::path&)> tokenizer;
};
ModelLoaders default_model_loaders();

struct RuntimeOptions {
  std::vector<ModelSpec> models;
  // Engine threads per forward pass; 0: the process's CPUs divided among the compute threads.
  int threads = 0;
  model::Precision precision = model::Precision::kFp32;
  // Serve a bf16/int8 model even when it fails the accuracy gate at load.
  bool force_precision = false;
  // --precision auto (precision is then not read): each model is served in the fastest
  // precision that passes the gate (model/auto_precision.h); a ModelSpec's own precision wins.
  bool auto_precision = false;
  AutoPrecisionOptions auto_precision_options;

  // Dynamic batcher: a batch holds at most this many tokens (an input longer than the budget
  // runs alone) and this many inputs (each item of a client batch counts).
  std::size_t max_batch_tokens = kDefaultMaxBatchTokens;
  std::size_t max_batch_requests = kDefaultMaxBatchRequests;
  // 0: a batch is taken from whatever is queued as soon as a compute thread is free.
  std::chrono::microseconds max_wait{0};
  // While several models have traffic, one batch takes at most about this much compute (by the
  // model's measured cost per token; at least one input), so that a small model's request never
  // waits behind a flooded large model's long batch. 0: no cut (batcher.h).
  std::chrono::milliseconds max_batch_turn = kDefaultMaxBatchTurn;

  // Admission: requests (not items) in flight across all models, and requests queued or
  // running per model (0: same as max_concurrent_requests). Beyond either: kOverloaded.
  std::size_t max_concurrent_requests = kDefaultMaxConcurrentRequests;
  std::size_t max_queued_requests_per_model = 0;

  // Tokens per input, special tokens included: min(model's limit, this); 0: the model's limit.
  std::size_t max_input_length = 0;
  bool auto_truncate = false;  // truncate over-long inputs even when the request did not ask
                               // (a request whose long_input is kChunk is chunked instead)
  // Sequences a request with chunked inputs may need, its windows counted one by one (serve
  // sets --max-client-batch-size). 0: no limit.
  std::size_t max_windows_per_request = 0;
  // Bytes per text, refused before tokenizing (kInvalidInput) even when truncating. 0: derived
  // per model (input_limits.h): kInputBytesPerToken per token of its max_input_length, at least
  // kMinInputBytes.
  std::size_t max_input_bytes = 0;

  bool lazy = false;                         // load a model on its first request
  std::chrono::milliseconds idle_unload{0};  // 0: never unload an idle model
  // --load-timeout: a load (eager, lazy, reload or MME) that takes longer is abandoned and
  // fails; 0: no deadline.
  std::chrono::milliseconds load_timeout{0};
  std::optional<Pooling> pooling;  // embedders: overrides 1_Pooling/config.json
  // Embedders: the prompt before a text whose request names none, by the name of one of each
  // embedder's prompts or as text (at most one of the two); overrides the folder's
  // default_prompt_name (model_config.h FolderOptions).
  std::optional<std::string> default_prompt_name;
  std::optional<std::string> default_prompt;

  int compute_threads =
      kDefaultComputeThreads;  // threads running forward passes (each uses `threads` cores)
  int tokenizer_threads = 1;   // threads tokenizing and validating inputs
  // Pin each compute thread's team, thread by thread, to CPUs of its own (model/layers/
  // cpu_pinning.h says why: the wake-up stall after idle gaps).
  bool pin_threads = kDefaultPinThreads;

  ModelLoaders loaders;
};

class Runtime final : public InferenceService {
 public:
  // Registers every model (config.json read at once; a broken folder becomes a kFailed model,
  // the others still serve), starts the runtime threads and, unless `lazy`, starts loading all
  // models in the background: ready() turns true when they are loaded. Throws kInvalidArgument
  // for an invalid or duplicate model name or an option out of range.
  explicit Runtime(RuntimeOptions options);
  ~Runtime() override;
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  const RuntimeOptions& options() const;
  // Blocks until every eagerly loaded model finished loading (ready or failed) or the timeout
  // passes; returns ready().
  bool wait_ready(std::chrono::milliseconds timeout);

  std::vector<ModelDescription> models() const override;
  std::optional<ModelDescription> find_model(std::string_view name) const override;
  void submit(InferenceRequest request, Completion done) override;
  tokenizer::Encoding tokenize(std::string_view model, std::string_view text,
                               std::optional<std::string_view> pair,
                               bool add_special_tokens) const override;
  std::string decode(std::string_view model, std::span<const std::int32_t> ids,
                     bool skip_special_tokens) const override;
  void load_model(const std::string& name, const std::filesystem::path& dir,
                  LoadDone done) override;
  void unload_model(const std::string& name) override;
  bool ready() const override;
  void begin_drain() override;
  bool wait_idle(std::chrono::milliseconds timeout) override;
  std::string render_metrics() const override;
  void record_http_request(std::string_view route, std::string_view model, int status,
                           std::chrono::nanoseconds duration) override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace onepass::runtime

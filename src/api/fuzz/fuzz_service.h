// A single-threaded runtime::InferenceService for the API fuzz targets. It keeps the promises of
// service.h that the dialects rely on, with fixed-shape outputs instead of an engine:
//   - admission on the caller's thread (unknown model kNotFound, no inputs kInvalidArgument,
//     a text or the fill-mask targets over the model's max_input_bytes kInvalidInput, as
//     runtime/input_limits.h says, an unknown prompt name kInvalidInput, as runtime/prompts.h);
//   - `done` runs later, never inside submit(): completions wait in a queue until
//     run_pending(), which the harness calls after Api::handle returned (the real runtime runs
//     them on another thread);
//   - per-item failures as InferenceResult::error, like the runtime's prepare step: too many
//     tokens without truncation, an empty or out-of-vocabulary pre-tokenized input;
//   - LongInput::kChunk as runtime/windows.h does it for logits and pooled outputs: a text over
//     the limit becomes windows of the limit sharing `stride` tokens (a stride not below a
//     window's room fails the request), of the first text or (chunked_text) the second, at most
//     max_windows_per_item of them, each with its own values, combined by token count;
//   - outputs of the right shape: logits [num_labels], pooled [hidden], tokens
//     [num_tokens, hidden], token logits [num_tokens, num_labels] with the text's encoding (from
//     tokenize() below), with num_tokens within the model's limit.
// It also checks that what the dialects submit is well formed (abort otherwise).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "api/fuzz/api_fuzz_common.h"
#include "api/fuzz/planted_folders.h"
#include "base/error.h"
#include "runtime/finish_outputs.h"
#include "runtime/input_limits.h"
#include "runtime/prompts.h"
#include "runtime/service.h"
#include "runtime/tasks.h"

namespace onepass::api::fuzzing {

class FuzzService : public runtime::InferenceService {
 public:
  static constexpr int kHidden = 8;
  static constexpr int kMaxTokens = 32;
  static constexpr int kVocab = 1000;
  static constexpr std::size_t kMaxInputBytes = 512;  // small, so the fuzzer reaches it

  // A classifier with an entailment label ("nli"), a reranker ("rerank"), an embedder
  // ("embed"), a token classifier with B-/I- labels ("ner"), a SPLADE model ("splade"), an
  // extractive question-answering model ("qa"); `names` picks which of them this service hosts.
  explicit FuzzService(const std::vector<std::string>& names) {
    for (const auto& name : names) models_.push_back(describe(name));
  }

  std::vector<runtime::ModelDescription> models() const override { return models_; }

  std::optional<runtime::ModelDescription> find_model(std::string_view name) const override {
    if (name.empty()) {
      if (models_.size() == 1) return models_.front();
      return std::nullopt;
    }
    for (const auto& m : models_)
      if (m.name == name) return m;
    return std::nullopt;
  }

  void submit(runtime::InferenceRequest request, runtime::Completion done) override {
    const auto model = find_model(request.model);
    if (!model) throw Error(ErrorKind::kNotFound, "model '" + request.model + "' is not loaded");
    if (request.items.empty()) throw Error(ErrorKind::kInvalidArgument, "no inputs");
    for (const auto& item : request.items) {
      if (item.pretokenized) continue;
      runtime::check_input_bytes(item.text, model->max_input_bytes, "an input");
      if (item.text_pair)
        runtime::check_input_bytes(*item.text_pair, model->max_input_bytes, "the second text");
    }
    // An unknown prompt name is refused as the runtime refuses it (its message quotes the name).
    if (request.prompt_name) runtime::prompt_for(*model, request.prompt_name);
    if (request.output == runtime::OutputKind::kFillMask)
      runtime::check_fill_mask_target_bytes(request.fill_mask.targets, model->max_input_bytes);
    // A dialect must ask for the output its model can give.
    check(runtime::task_produces(model->task, request.output));
    check(request.output != runtime::OutputKind::kFillMask || request.fill_mask.top_k >= 1);
    pending_.emplace_back(std::move(request), std::move(done));
  }

  std::string decode(std::string_view model, std::span<const std::int32_t> ids,
                     bool skip_special_tokens) const override {
    const auto described = find_model(model);
    if (!described) throw Error(ErrorKind::kNotFound, "no such model");
    std::string text;
    for (const std::int32_t id : ids) {
      if (id < 0 || id >= described->info.vocab_size)
        throw Error(ErrorKind::kInvalidInput, "token id outside the vocabulary");
      if (skip_special_tokens && id < 3) continue;
      if (!text.empty()) text.push_back(' ');
      text.append(std::to_string(id));
    }
    return text;
  }

  tokenizer::Encoding tokenize(std::string_view model, std::string_view text,
                               std::optional<std::string_view> pair,
                               bool add_special_tokens) const override {
    const auto described = find_model(model);
    if (!described) throw Error(ErrorKind::kNotFound, "no such model");
    runtime::check_input_bytes(text, described->max_input_bytes, "an input");
    if (pair) runtime::check_input_bytes(*pair, described->max_input_bytes, "the second text");
    tokenizer::Encoding e;
    std::int32_t word_index = 0;  // one word per token, as the space-separated words are
    std::int32_t type_id = 0;
    const auto add = [&](std::int32_t id, std::string token, std::uint32_t start, std::uint32_t end,
                         bool special) {
      e.ids.push_back(id);
      e.type_ids.push_back(type_id);
      e.tokens.push_back(std::move(token));
      e.offsets.push_back({start, end});
      e.special_tokens_mask.push_back(special ? 1 : 0);
      e.word_ids.push_back(special ? -1 : word_index++);
    };
    if (add_special_tokens) add(1, "[CLS]", 0, 0, true);
    // One token per space-separated word; offsets in code points of each text, as the real
    // tokenizers give them; a pair is [CLS] A [SEP] B [SEP], B's type id 1.
    const auto words = [&](std::string_view t) {
      std::uint32_t cp = 0, start = 0;
      std::string word;
      for (std::size_t i = 0; i <= t.size(); ++i) {
        if (i == t.size() || t[i] == ' ') {
          if (!word.empty())
            add(100 + static_cast<std::int32_t>(word.size() % 800), word, start, cp, false);
          word.clear();
          if (i < t.size()) ++cp;
          continue;
        }
        if (word.empty()) start = cp;
        word.push_back(t[i]);
        if ((static_cast<unsigned char>(t[i]) & 0xC0) != 0x80) ++cp;
      }
    };
    words(text);
    if (add_special_tokens) add(2, "[SEP]", 0, 0, true);
    if (pair) {
      word_index = 0;
      type_id = 1;
      words(*pair);
      if (add_special_tokens) add(2, "[SEP]", 0, 0, true);
    }
    return e;
  }

  // Reads the folder as a load does (planted_folders.h), later, as the loader thread would;
  // nothing is registered: a sound folder answers 200 and the hosted models stay as they were.
  void load_model(const std::string&, const std::filesystem::path& dir, LoadDone done) override {
    loads_.emplace_back([dir, done = std::move(done)] {
      try {
        read_model_folder(dir);
      } catch (...) {
        done(std::current_exception());
        return;
      }
      done(nullptr);
    });
  }
  void unload_model(const std::string& name) override {
    throw Error(ErrorKind::kNotFound, "model '" + name + "' is not loaded");
  }
  bool ready() const override { return true; }
  void begin_drain() override {}
  bool wait_idle(std::chrono::milliseconds) override { return pending_.empty() && loads_.empty(); }
  std::string render_metrics() const override { return "onepass_fuzz_requests_total 0\n"; }
  void record_http_request(std::string_view, std::string_view, int,
                           std::chrono::nanoseconds) override {}

  // Runs every queued completion, as the runtime's threads would.
  void run_pending() {
    while (!loads_.empty()) {
      auto load = std::move(loads_.front());
      loads_.pop_front();
      load();
    }
    while (!pending_.empty()) {
      auto job = std::move(pending_.front());
      pending_.pop_front();
      job.second(run(job.first));
    }
  }

 private:
  static runtime::ModelDescription describe(const std::string& name) {
    runtime::ModelDescription d;
    d.name = name;
    d.state = runtime::ModelState::kReady;
    d.max_input_length = kMaxTokens;
    d.max_input_bytes = kMaxInputBytes;
    d.info.hidden_size = kHidden;
    d.info.vocab_size = kVocab;
    d.info.type_vocab_size = 2;
    d.info.max_tokens = kMaxTokens;
    if (name == "embed") {
      d.task = runtime::ModelTask::kEmbedder;
      d.info.architecture = "BertModel";
      d.pooling = runtime::Pooling::kMean;
      d.prompts = {{"query", "query: "}, {"passage", "passage: "}};
    } else if (name == "ner") {
      d.task = runtime::ModelTask::kTokenClassifier;
      d.info.architecture = "BertForTokenClassification";
      d.info.head = model::HeadKind::kTokenClassification;
      d.info.num_labels = 5;
      d.info.id2label = {"O", "B-PER", "I-PER", "B-LOC", "I-LOC"};
    } else if (name == "qa") {
      d.task = runtime::ModelTask::kQuestionAnswerer;
      d.info.architecture = "BertForQuestionAnswering";
      d.info.head = model::HeadKind::kQuestionAnswering;
      d.info.num_labels = 2;
      d.info.id2label = {"LABEL_0", "LABEL_1"};
    } else if (name == "splade") {
      d.task = runtime::ModelTask::kMaskedLm;
      d.info.architecture = "BertForMaskedLM";
      d.info.head = model::HeadKind::kMaskedLm;
    } else if (name == "rerank") {
      d.task = runtime::ModelTask::kReranker;
      d.info.architecture = "BertForSequenceClassification";
      d.info.head = model::HeadKind::kSequenceClassification;
      d.info.num_labels = 1;
      d.info.id2label = {"LABEL_0"};
    } else {
      d.task = runtime::ModelTask::kClassifier;
      d.info.architecture = "BertForSequenceClassification";
      d.info.head = model::HeadKind::kSequenceClassification;
      d.info.num_labels = 3;
      d.info.id2label = {"contradiction", "entailment", "neutral"};
      d.entailment_index = 1;
      d.contradiction_index = 0;
    }
    return d;
  }

  static int count_tokens(const runtime::InferenceItem& item) {
    if (item.pretokenized) return static_cast<int>(item.input_ids.size());
    int words = 2;  // [CLS] and [SEP]
    for (const char c : item.text) words += c == ' ';
    if (item.text_pair) {
      words += 2;
      for (const char c : *item.text_pair) words += c == ' ';
    }
    return words;
  }

  runtime::InferenceResult run(const runtime::InferenceRequest& request) const {
    runtime::InferenceResult result;
    const auto model = *find_model(request.model);
    const std::size_t limit = request.max_length
                                  ? std::min<std::size_t>(request.max_length, kMaxTokens)
                                  : static_cast<std::size_t>(kMaxTokens);
    try {
      for (const auto& item : request.items) {
        if (item.pretokenized) {
          if (item.input_ids.empty()) throw Error(ErrorKind::kInvalidInput, "input_ids is empty");
          if (!item.token_type_ids.empty() && item.token_type_ids.size() != item.input_ids.size())
            throw Error(ErrorKind::kInvalidInput, "token_type_ids and input_ids differ in length");
          for (const auto id : item.input_ids)
            if (id < 0 || id >= kVocab)
              throw Error(ErrorKind::kInvalidInput, "token id outside the vocabulary");
        }
        if (request.output == runtime::OutputKind::kTokenLogits) {
          result.items.push_back(token_logits(request, item, model, limit));
          result.total_tokens += static_cast<std::size_t>(result.items.back().num_tokens);
          continue;
        }
        std::size_t tokens = static_cast<std::size_t>(count_tokens(item));
        if (tokens > limit && chunks(request, item)) {
          result.items.push_back(chunked(request, item, model, tokens, limit));
          result.total_tokens += static_cast<std::size_t>(result.items.back().num_tokens);
          continue;
        }
        if (tokens > limit) {
          if (!request.truncate) throw Error(ErrorKind::kInvalidInput, "input has too many tokens");
          tokens = limit;
        }
        // Fixed, finite values derived from the input length, so answers differ by input.
        const float base = static_cast<float>(item.text.size() % 7) - 3.0f;
        runtime::ItemOutput out;
        out.num_tokens = static_cast<int>(tokens);
        if (request.output == runtime::OutputKind::kFillMask) {
          // The runtime's rules: a "[MASK]" word per mask, none is refused; top_k predictions
          // (at most the targets) per mask.
          std::size_t masks = 0;
          for (std::size_t at = item.text.find("[MASK]"); at != std::string::npos;
               at = item.text.find("[MASK]", at + 1))
            ++masks;
          if (masks == 0) throw Error(ErrorKind::kInvalidInput, "No mask_token ([MASK]) found");
          std::size_t k = request.fill_mask.top_k;
          if (!request.fill_mask.targets.empty()) k = std::min(k, request.fill_mask.targets.size());
          k = std::min<std::size_t>(k, kVocab);
          out.predictions.assign(masks, {});
          for (auto& per_mask : out.predictions) {
            for (std::size_t r = 0; r < k; ++r) {
              per_mask.push_back({1.0f / static_cast<float>(r + 2), static_cast<std::int32_t>(r),
                                  std::to_string(r), item.text});
            }
          }
        } else if (model.task == runtime::ModelTask::kMaskedLm) {
          // Mostly 0, as a SPLADE vector is.
          out.values.assign(static_cast<std::size_t>(kVocab), 0.0f);
          out.values[static_cast<std::size_t>(tokens) % out.values.size()] = base + 4.0f;
        } else if (model.task != runtime::ModelTask::kEmbedder) {
          for (int j = 0; j < model.info.num_labels; ++j) out.values.push_back(base + j * 0.5f);
        } else {
          const int rows = request.output == runtime::OutputKind::kTokens ? out.num_tokens : 1;
          for (int t = 0; t < rows; ++t)
            for (int h = 0; h < kHidden; ++h) out.values.push_back(base + 0.25f * (h + t));
        }
        result.total_tokens += tokens;
        result.items.push_back(std::move(out));
      }
      runtime::finish_outputs(request, result.items);  // as the runtime's scheduler does
    } catch (...) {
      result.items.clear();
      result.error = std::current_exception();
    }
    return result;
  }

  static bool chunks(const runtime::InferenceRequest& request, const runtime::InferenceItem& item) {
    return request.long_input == runtime::LongInput::kChunk && !request.truncate &&
           !item.pretokenized &&
           (request.output == runtime::OutputKind::kLogits ||
            request.output == runtime::OutputKind::kPooled);
  }

  // A chunked input: the windows runtime/windows.h cuts from `tokens` tokens (the split text's
  // share split, the special tokens and the other text in every window), each with values that
  // differ by window, and their token-weighted mean, as combine_windows gives.
  static runtime::ItemOutput chunked(const runtime::InferenceRequest& request,
                                     const runtime::InferenceItem& item,
                                     const runtime::ModelDescription& model, std::size_t tokens,
                                     std::size_t limit) {
    const bool second = item.text_pair && request.chunked_text == runtime::ChunkedText::kSecond;
    const std::string& split = second ? *item.text_pair : item.text;
    // count_tokens counts a text's spaces as its tokens.
    const auto split_spaces = static_cast<std::size_t>(std::count(split.begin(), split.end(), ' '));
    const std::size_t frame = tokens - split_spaces;
    if (frame >= limit) throw Error(ErrorKind::kInvalidInput, "no room for the split text");
    const std::size_t room = limit - frame;
    const std::size_t stride = request.stride.value_or(room / 8);
    if (stride >= room) throw Error(ErrorKind::kInvalidInput, "stride not below the room");
    const std::size_t split_tokens = tokens - frame;
    const int width = model.task == runtime::ModelTask::kEmbedder ? kHidden : model.info.num_labels;
    runtime::ItemOutput out;
    std::vector<double> sum(static_cast<std::size_t>(width), 0.0);
    for (std::size_t begin = 0;; begin += room - stride) {
      const std::size_t end = std::min(begin + room, split_tokens);
      runtime::WindowOutput window;
      window.num_tokens = static_cast<int>(frame + end - begin);
      for (int j = 0; j < width; ++j) {
        window.values.push_back(static_cast<float>((begin + static_cast<std::size_t>(j) * 5) % 9) -
                                4.0f);
        sum[static_cast<std::size_t>(j)] += window.num_tokens * window.values.back();
      }
      out.num_tokens += window.num_tokens;
      out.windows.push_back(std::move(window));
      if (end >= split_tokens || out.windows.size() == request.max_windows_per_item) break;
    }
    for (const double s : sum) out.values.push_back(static_cast<float>(s / out.num_tokens));
    if (out.windows.size() == 1) out.windows.clear();  // one window is no chunked input
    return out;
  }

  // A token classifier's output: the fake tokenizer's encoding of a text (truncated like the
  // runtime truncates) or the given ids, and [tokens, num_labels] finite logits that vary by
  // token and label so that every aggregation has labels to group.
  runtime::ItemOutput token_logits(const runtime::InferenceRequest& request,
                                   const runtime::InferenceItem& item,
                                   const runtime::ModelDescription& model,
                                   std::size_t limit) const {
    runtime::ItemOutput out;
    std::size_t tokens = item.input_ids.size();
    if (!item.pretokenized) {
      out.encoding = tokenize(model.name, item.text, std::nullopt, true);
      tokens = out.encoding.ids.size();
    }
    if (tokens > limit) {
      if (!request.truncate) throw Error(ErrorKind::kInvalidInput, "input has too many tokens");
      tokens = limit;
      auto& e = out.encoding;
      if (!item.pretokenized) {
        e.ids.resize(tokens);
        e.type_ids.resize(tokens);
        e.tokens.resize(tokens);
        e.offsets.resize(tokens);
        e.special_tokens_mask.resize(tokens);
        e.word_ids.resize(tokens);
      }
    }
    out.num_tokens = static_cast<int>(tokens);
    for (std::size_t t = 0; t < tokens; ++t)
      for (int j = 0; j < model.info.num_labels; ++j)
        out.values.push_back(static_cast<float>((t * 7 + static_cast<std::size_t>(j) * 3) % 11) *
                             0.5f);
    out.token_style.continuing_subword_prefix = "##";
    out.token_style.unk_token_id = 3;
    return out;
  }

  std::vector<runtime::ModelDescription> models_;
  std::deque<std::pair<runtime::InferenceRequest, runtime::Completion>> pending_;
  std::deque<std::function<void()>> loads_;  // MME loads, run first by run_pending()
};

}  // namespace onepass::api::fuzzing

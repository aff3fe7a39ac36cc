#include "fake_service.h"

#include <cmath>
#include <limits>

#include "base/error.h"

namespace onepass::testing {

namespace {

std::uint64_t fnv(std::string_view text, std::uint64_t h = 1469598103934665603ull) {
  for (const char c : text) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  return h;
}

std::uint64_t item_hash(const runtime::InferenceItem& item) {
  if (item.pretokenized) {
    std::uint64_t h = 7;
    for (const auto id : item.input_ids) h = h * 31 + static_cast<std::uint64_t>(id);
    for (const auto t : item.token_type_ids) h = h * 17 + static_cast<std::uint64_t>(t);
    return h;
  }
  std::uint64_t h = fnv(item.text);
  if (item.text_pair) h = fnv(*item.text_pair, h ^ 0x9e3779b97f4a7c15ull);
  return h;
}

runtime::ModelDescription describe(std::string name, runtime::ModelTask task) {
  runtime::ModelDescription d;
  d.name = std::move(name);
  d.task = task;
  d.state = runtime::ModelState::kReady;
  d.max_input_length = FakeService::kMaxTokens;
  d.info.hidden_size = FakeService::kHidden;
  if (task == runtime::ModelTask::kClassifier) {
    d.info.architecture = "BertForSequenceClassification";
    d.info.head = model::HeadKind::kSequenceClassification;
    d.info.num_labels = 3;
    d.info.id2label = {"contradiction", "entailment", "neutral"};
    d.entailment_index = 1;
    d.contradiction_index = 0;
  } else if (task == runtime::ModelTask::kReranker) {
    d.info.architecture = "BertForSequenceClassification";
    d.info.head = model::HeadKind::kSequenceClassification;
    d.info.num_labels = 1;
    d.info.id2label = {"LABEL_0"};
  } else {
    d.info.architecture = "BertModel";
    d.pooling = runtime::Pooling::kMean;
  }
  return d;
}

}  // namespace

std::vector<float> FakeService::logits(const runtime::InferenceItem& item, int num_labels) {
  const std::uint64_t h = item_hash(item);
  std::vector<float> out(num_labels);
  for (int j = 0; j < num_labels; ++j)
    out[j] = static_cast<float>(static_cast<int>((h >> (8 * j)) & 0xff) - 128) / 32.0f;
  return out;
}

std::vector<float> FakeService::pooled(const runtime::InferenceItem& item) {
  auto v = logits(item, kHidden);
  for (auto& x : v) x += 0.25f;  // never all zero
  return v;
}

int FakeService::num_tokens(const runtime::InferenceItem& item) {
  if (item.pretokenized) return static_cast<int>(item.input_ids.size());
  int words = 1;
  for (const char c : item.text) words += c == ' ';
  if (item.text_pair) {
    words += 2;
    for (const char c : *item.text_pair) words += c == ' ';
  }
  return words + 2;
}

FakeService::FakeService() {
  models_ = {describe("nli", runtime::ModelTask::kClassifier),
             describe("rerank", runtime::ModelTask::kReranker),
             describe("embed", runtime::ModelTask::kEmbedder)};
  for (int i = 0; i < 2; ++i) workers_.emplace_back([this] { worker(); });
}

FakeService::~FakeService() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
    hold_ = false;
  }
  cv_.notify_all();
  for (auto& t : workers_) t.join();
}

void FakeService::hold(bool on) {
  {
    std::lock_guard lock(mutex_);
    hold_ = on;
  }
  cv_.notify_all();
}

std::size_t FakeService::queued() const {
  std::lock_guard lock(mutex_);
  return queue_.size();
}

std::size_t FakeService::recorded_requests() const { return recorded_.load(); }

std::vector<runtime::ModelDescription> FakeService::models() const {
  std::lock_guard lock(mutex_);
  if (only_models.empty()) return models_;
  std::vector<runtime::ModelDescription> out;
  for (const auto& m : models_)
    for (const auto& name : only_models)
      if (m.name == name) out.push_back(m);
  return out;
}

std::optional<runtime::ModelDescription> FakeService::find_model(std::string_view name) const {
  const auto all = models();
  if (name.empty()) {
    if (all.size() == 1) return all.front();
    return std::nullopt;
  }
  for (const auto& m : all)
    if (m.name == name) return m;
  return std::nullopt;
}

void FakeService::submit(runtime::InferenceRequest request, runtime::Completion done) {
  if (draining_) throw Error(ErrorKind::kUnavailable, "shutting down");
  if (!find_model(request.model))
    throw Error(ErrorKind::kNotFound, "no model '" + request.model + "'");
  if (in_flight_.fetch_add(1) >= max_in_flight_) {
    --in_flight_;
    throw Error(ErrorKind::kOverloaded, "too many requests in flight");
  }
  {
    std::lock_guard lock(mutex_);
    queue_.emplace_back(std::move(request), std::move(done));
  }
  cv_.notify_one();
}

runtime::InferenceResult FakeService::run(const runtime::InferenceRequest& request) const {
  runtime::InferenceResult result;
  const auto model = *find_model(request.model);
  try {
    for (const auto& item : request.items) {
      if (item.text == "__nan__") {
        runtime::ItemOutput out;
        out.values = {std::numeric_limits<float>::quiet_NaN(), 0, 0};
        result.items.push_back(out);
        continue;
      }
      int tokens = num_tokens(item);
      if (tokens > kMaxTokens) {
        if (!request.truncate)
          throw Error(ErrorKind::kInvalidInput, "input has " + std::to_string(tokens) +
                                                    " tokens, more than the model's limit of " +
                                                    std::to_string(kMaxTokens));
        tokens = kMaxTokens;
      }
      runtime::ItemOutput out;
      out.num_tokens = tokens;
      if (model.task == runtime::ModelTask::kEmbedder) {
        const auto v = pooled(item);
        if (request.output == runtime::OutputKind::kTokens) {
          for (int t = 0; t < tokens; ++t)
            for (const float x : v) out.values.push_back(x + static_cast<float>(t));
        } else {
          out.values = v;
        }
      } else {
        out.values = logits(item, model.info.num_labels);
      }
      result.total_tokens += static_cast<std::size_t>(tokens);
      result.items.push_back(std::move(out));
    }
  } catch (...) {
    result.items.clear();
    result.error = std::current_exception();
  }
  return result;
}

void FakeService::worker() {
  while (true) {
    std::pair<runtime::InferenceRequest, runtime::Completion> job;
    {
      std::unique_lock lock(mutex_);
      cv_.wait(lock, [this] { return stop_ || (!hold_ && !queue_.empty()); });
      if (queue_.empty()) return;
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    auto result = run(job.first);
    --in_flight_;
    job.second(std::move(result));
  }
}

std::string FakeService::decode(std::string_view model, std::span<const std::int32_t> ids,
                                bool skip_special_tokens) const {
  if (!find_model(model)) throw Error(ErrorKind::kNotFound, "no model");
  std::string text;
  for (const std::int32_t id : ids) {
    if (id < 0) throw Error(ErrorKind::kInvalidInput, "token id outside the vocabulary");
    if (skip_special_tokens && (id == 1 || id == 2)) continue;
    if (!text.empty()) text.push_back(' ');
    text.append(std::to_string(id));
  }
  return text;
}

tokenizer::Encoding FakeService::tokenize(std::string_view model, std::string_view text,
                                          std::optional<std::string_view>, bool add_special) const {
  if (!find_model(model)) throw Error(ErrorKind::kNotFound, "no model");
  tokenizer::Encoding e;
  auto special = [&](const char* token, int id) {
    e.ids.push_back(id);
    e.type_ids.push_back(0);
    e.tokens.push_back(token);
    e.offsets.push_back({0, 0});
    e.special_tokens_mask.push_back(1);
  };
  if (add_special) special("[CLS]", 1);
  // Words split on spaces; offsets in code points.
  std::uint32_t cp = 0, start = 0;
  std::string word;
  auto flush = [&] {
    if (word.empty()) return;
    e.ids.push_back(static_cast<std::int32_t>(100 + word.size()));
    e.type_ids.push_back(0);
    e.tokens.push_back(word);
    e.offsets.push_back({start, cp});
    e.special_tokens_mask.push_back(0);
    word.clear();
  };
  for (const char c : text) {
    const bool lead = (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    if (c == ' ') {
      flush();
      ++cp;
      continue;
    }
    if (word.empty()) start = cp;
    word.push_back(c);
    if (lead) ++cp;
  }
  // cp counted lead bytes as they came; fix the end of the last word.
  flush();
  if (add_special) special("[SEP]", 2);
  return e;
}

void FakeService::load_model(const std::string& name, const std::filesystem::path& dir,
                             LoadDone done) {
  {
    std::lock_guard lock(mutex_);
    for (const auto& m : models_)
      if (m.name == name) throw Error(ErrorKind::kInvalidArgument, "model name taken");
    if (std::filesystem::exists(dir / "config.json"))
      models_.push_back(describe(name, runtime::ModelTask::kClassifier));
  }
  done(std::filesystem::exists(dir / "config.json")
           ? nullptr
           : std::make_exception_ptr(
                 Error(ErrorKind::kNotFound, "no config.json in the model folder")));
}

void FakeService::unload_model(const std::string& name) {
  std::lock_guard lock(mutex_);
  for (auto it = models_.begin(); it != models_.end(); ++it)
    if (it->name == name) {
      models_.erase(it);
      return;
    }
  throw Error(ErrorKind::kNotFound, "no model '" + name + "'");
}

bool FakeService::wait_idle(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (in_flight_ > 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  return in_flight_ == 0;
}

std::string FakeService::render_metrics() const {
  return "# TYPE onepass_fake_requests_total counter\nonepass_fake_requests_total " +
         std::to_string(recorded_.load()) + "\n";
}

void FakeService::record_http_request(std::string_view, std::string_view, int,
                                      std::chrono::nanoseconds) {
  ++recorded_;
}

}  // namespace onepass::testing

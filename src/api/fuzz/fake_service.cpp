// The API tests' and fuzz targets' fake service (fake_service.h).
#include "api/fuzz/fake_service.h"

#include <cstdio>
#include <cstdlib>
#include <utility>

#include "base/error.h"
#include "runtime/input_limits.h"
#include "runtime/prompts.h"
#include "runtime/tasks.h"

namespace onepass::api::fuzzing {
namespace {

// A dialect broke the service's contract: abort, so that libFuzzer keeps the input and a test
// binary fails where it happened.
void expect(bool ok, const char* broken) {
  if (ok) return;
  std::fprintf(stderr, "fake service: a dialect %s\n", broken);
  std::abort();
}

void read_config_only(const std::filesystem::path& dir) {
  if (!std::filesystem::exists(dir / "config.json"))
    throw Error(ErrorKind::kNotFound, "no config.json in the model folder");
}

}  // namespace

FakeService::FakeService(FakeServiceOptions options) : options_(std::move(options)) {
  for (const auto& kind : options_.models)
    models_.push_back(describe_fake_model(kind, kind, options_.limits));
  for (int i = 0; i < options_.workers; ++i) workers_.emplace_back([this] { worker(); });
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
  return jobs_.size();
}

void FakeService::enqueue(std::function<void()> job) {
  {
    std::lock_guard lock(mutex_);
    jobs_.push_back(std::move(job));
  }
  cv_.notify_one();
}

// A worker finishes the queue before it stops: late completions still answer.
void FakeService::worker() {
  while (true) {
    std::function<void()> job;
    {
      std::unique_lock lock(mutex_);
      cv_.wait(lock, [this] { return stop_ || (!hold_ && !jobs_.empty()); });
      if (jobs_.empty()) return;
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    job();
  }
}

void FakeService::run_pending() {
  while (true) {
    std::function<void()> job;
    {
      std::lock_guard lock(mutex_);
      if (jobs_.empty()) return;
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    job();
  }
}

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

runtime::ModelDescription FakeService::require_model(std::string_view name) const {
  auto model = find_model(name);
  if (!model) throw Error(ErrorKind::kNotFound, "model '" + std::string(name) + "' is not loaded");
  return *std::move(model);
}

void FakeService::submit(runtime::InferenceRequest request, runtime::Completion done) {
  if (draining_) throw Error(ErrorKind::kUnavailable, "shutting down");
  auto model = require_model(request.model);
  if (request.items.empty()) throw Error(ErrorKind::kInvalidArgument, "no inputs");
  for (const auto& item : request.items) {
    if (item.pretokenized) continue;
    runtime::check_input_bytes(item.text, model.max_input_bytes, "an input");
    if (item.text_pair)
      runtime::check_input_bytes(*item.text_pair, model.max_input_bytes, "the second text");
  }
  // An unknown prompt name is refused as the runtime refuses it (its message quotes the name).
  if (request.prompt_name) runtime::prompt_for(model, request.prompt_name);
  if (request.output == runtime::OutputKind::kFillMask)
    runtime::check_fill_mask_target_bytes(request.fill_mask.targets, model.max_input_bytes);
  expect(runtime::task_produces(model.task, request.output),
         "asked a model for an output its task cannot give");
  expect(request.output != runtime::OutputKind::kFillMask || request.fill_mask.top_k >= 1,
         "asked for fill-mask with top_k 0");
  if (in_flight_.fetch_add(1) >= max_in_flight_) {
    --in_flight_;
    throw Error(ErrorKind::kOverloaded, "too many requests in flight");
  }
  enqueue([this, request = std::move(request), done = std::move(done), model = std::move(model)] {
    auto result = fake_result(request, model, options_.nan_marker);
    --in_flight_;
    done(std::move(result));
  });
}

tokenizer::Encoding FakeService::tokenize(std::string_view model, std::string_view text,
                                          std::optional<std::string_view> pair,
                                          bool add_special_tokens) const {
  const auto described = require_model(model);
  runtime::check_input_bytes(text, described.max_input_bytes, "an input");
  if (pair) runtime::check_input_bytes(*pair, described.max_input_bytes, "the second text");
  return fake_encode(text, pair, add_special_tokens);
}

std::string FakeService::decode(std::string_view model, std::span<const std::int32_t> ids,
                                bool skip_special_tokens) const {
  return fake_decode(ids, require_model(model).info.vocab_size, skip_special_tokens);
}

// Later, as the runtime's loader thread answers; a loaded folder hosts an "nli" model.
void FakeService::load_model(const std::string& name, const std::filesystem::path& dir,
                             LoadDone done) {
  {
    std::lock_guard lock(mutex_);
    for (const auto& m : models_)
      if (m.name == name) throw Error(ErrorKind::kInvalidArgument, "model name taken");
  }
  enqueue([this, name, dir, done = std::move(done)] {
    try {
      if (options_.read_folder)
        options_.read_folder(dir);
      else
        read_config_only(dir);
    } catch (...) {
      done(std::current_exception());
      return;
    }
    if (!options_.fixed_models) {
      std::lock_guard lock(mutex_);
      models_.push_back(describe_fake_model("nli", name, options_.limits));
    }
    done(nullptr);
  });
}

void FakeService::unload_model(const std::string& name) {
  std::lock_guard lock(mutex_);
  if (!options_.fixed_models) {
    for (auto it = models_.begin(); it != models_.end(); ++it)
      if (it->name == name) {
        models_.erase(it);
        return;
      }
  }
  throw Error(ErrorKind::kNotFound, "model '" + name + "' is not loaded");
}

bool FakeService::wait_idle(std::chrono::milliseconds timeout) {
  const auto idle = [this] { return in_flight_ == 0 && queued() == 0; };
  if (workers_.empty()) return idle();  // nothing but run_pending() would make progress
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!idle() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  return idle();
}

std::string FakeService::render_metrics() const {
  return "# TYPE onepass_fake_requests_total counter\nonepass_fake_requests_total " +
         std::to_string(recorded_.load()) + "\n";
}

void FakeService::record_http_request(std::string_view, std::string_view, int,
                                      std::chrono::nanoseconds) {
  ++recorded_;
}

}  // namespace onepass::api::fuzzing

#include "runtime/model_registry.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <new>

#include "base/client_text.h"
#include "base/error.h"
#include "base/log.h"
#include "model/precision_check.h"
#include "runtime/fill_mask.h"
#include "runtime/model_config.h"
#include "runtime/spans.h"
#include "runtime/tasks.h"

namespace onepass::runtime {

using Clock = std::chrono::steady_clock;

namespace {

// Resident set size of this process from /proc/self/statm (0 where it cannot be read).
std::uint64_t rss_bytes() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (!f) return 0;
  unsigned long long pages_total = 0, pages_resident = 0;
  const int read = std::fscanf(f, "%llu %llu", &pages_total, &pages_resident);
  std::fclose(f);
  if (read != 2) return 0;
  return pages_resident * static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
}

// Unique per load across the process: the batcher's queue id (loaded_model.h).
std::atomic<std::uint64_t> next_instance{1};

void log_unload(const std::string& name, const char* reason) {
  log::info("model_unload", log::Fields().add("model", name).add("reason", reason));
}

}  // namespace

struct ModelRegistry::Slot {
  ModelSpec spec;
  bool eager = false;
  bool initial_done = true;  // eager slots: false until their first load ended
  ModelDescription description;
  std::shared_ptr<const LoadedModel> loaded;
  std::vector<OnLoaded> waiters;
  bool load_queued = false;
  std::size_t in_use = 0;  // requests admitted and not released
  Clock::time_point last_used = Clock::now();
  double load_seconds = 0;
  bool reserved = false;    // an MME load_async() is loading it
  OnLoadDone on_load_done;  // that load's caller; run once
};

// One load's result, shared by the loader thread and the thread that runs the load (which may
// outlive the registry when its deadline passed).
struct ModelRegistry::LoadRun {
  std::mutex mutex;
  std::condition_variable cv;
  bool finished = false;
  bool abandoned = false;  // the deadline passed: the result is dropped when it comes
  std::shared_ptr<const LoadedModel> model;
  std::exception_ptr error;
};

namespace {

std::exception_ptr unavailable(const std::string& message) {
  return std::make_exception_ptr(Error(ErrorKind::kUnavailable, message));
}

// An MME load's error for its caller: "model 'NAME' cannot be loaded: ..." of the same kind;
// out of memory stays std::bad_alloc (507).
std::exception_ptr load_failure(const std::string& name, const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::bad_alloc&) {
    return std::current_exception();
  } catch (const Error& e) {
    return std::make_exception_ptr(
        Error(e.kind(), "model '" + name + "' cannot be loaded: " + std::string(e.what())));
  } catch (const std::exception& e) {
    return std::make_exception_ptr(
        Error(ErrorKind::kInvalidModel,
              "model '" + name + "' cannot be loaded: " + std::string(e.what())));
  } catch (...) {
    return std::make_exception_ptr(
        Error(ErrorKind::kInternal, "model '" + name + "' cannot be loaded: unknown error"));
  }
}

std::string failure_message(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "unknown error";
  }
}

}  // namespace

ModelRegistry::ModelRegistry(RegistryOptions options)
    : options_(std::make_shared<const RegistryOptions>(std::move(options))) {
  ONEPASS_CHECK(options_->loaders.encoder && options_->loaders.tokenizer, "loaders are set");
  ONEPASS_CHECK(options_->load_timeout.count() >= 0, "load_timeout is not negative");
  loader_ = std::thread([this] { loader_loop(); });
}

ModelRegistry::~ModelRegistry() { shutdown(); }

void ModelRegistry::shutdown() {
  std::vector<OnLoaded> orphans;
  std::vector<OnLoadDone> orphan_loads;
  std::vector<std::shared_ptr<LoadRun>> abandoned;
  {
    std::lock_guard lock(mutex_);
    if (stopping_ && !loader_.joinable()) return;
    stopping_ = true;
    for (auto& [name, slot] : slots_) {
      for (auto& w : slot->waiters) orphans.push_back(std::move(w));
      slot->waiters.clear();
      if (slot->on_load_done) orphan_loads.push_back(std::exchange(slot->on_load_done, nullptr));
    }
    abandoned = std::move(abandoned_);
  }
  loader_cv_.notify_all();
  loaded_cv_.notify_all();
  if (loader_.joinable()) loader_.join();
  for (auto& w : orphans) w(nullptr, unavailable("the server is shutting down"));
  for (auto& done : orphan_loads) done(unavailable("the server is shutting down"));
  // Give abandoned loads a moment to end, so that they do not outlive what their loaders use
  // in the common case; one blocked for good is left behind (it owns what it reads).
  const auto give_up = Clock::now() + std::chrono::seconds(2);
  for (const auto& run : abandoned) {
    std::unique_lock lock(run->mutex);
    run->cv.wait_until(lock, give_up, [&] { return run->finished; });
  }
}

void ModelRegistry::add(const ModelSpec& spec, bool eager) {
  if (!is_valid_model_name(spec.name)) {
    throw Error(ErrorKind::kInvalidArgument, "invalid model name '" + spec.name + "'");
  }
  auto slot = std::make_shared<Slot>();
  slot->spec = spec;
  const std::string reference = spec.dir.string();
  const std::pair<std::string_view, std::string_view> resolved[] = {
      {"onepass.hub.reference", reference}};
  const auto resolve_start = Clock::now();
  try {
    // A Hub id becomes its snapshot folder (downloaded now) before config.json can be read.
    if (options_->loaders.resolve) {
      try {
        slot->spec.dir = options_->loaders.resolve(reference);
      } catch (const std::exception& e) {
        record_model_span("onepass.hub.resolve", spec.name, resolved, resolve_start, Clock::now(),
                          e.what());
        throw;
      }
      if (slot->spec.dir != spec.dir)
        record_model_span("onepass.hub.resolve", spec.name, resolved, resolve_start, Clock::now(),
                          {});
      if (slot->spec.dir != spec.dir)
        log::info("model_resolved", log::Fields()
                                        .add("model", spec.name)
                                        .add("reference", spec.dir.string())
                                        .add("dir", slot->spec.dir.string()));
    }
    slot->description = describe_model_folder(spec.name, slot->spec.dir, options_->folder);
  } catch (const std::exception& e) {
    // Served as a failed model (/ping, /metrics, its requests name the error), like a load
    // that fails later; the other models still serve.
    slot->description.name = spec.name;
    slot->description.state = ModelState::kFailed;
    slot->description.load_error = e.what();
    log::error("model_load_failed", log::Fields()
                                        .add("model", spec.name)
                                        .add("source", spec.dir.string())
                                        .add("error", e.what()));
  }
  std::lock_guard lock(mutex_);
  if (slots_.count(spec.name)) {
    throw Error(ErrorKind::kInvalidArgument, "model name '" + spec.name + "' is given twice");
  }
  slots_.emplace(spec.name, slot);
  if (eager && slot->description.state != ModelState::kFailed) {
    slot->eager = true;
    slot->initial_done = false;
    queue_load(slot);
  }
}

void ModelRegistry::load_async(const ModelSpec& spec, OnLoadDone done) {
  if (!is_valid_model_name(spec.name)) {
    throw Error(ErrorKind::kInvalidArgument, "invalid model name '" + spec.name + "'");
  }
  auto slot = std::make_shared<Slot>();
  slot->spec = spec;
  slot->description.name = spec.name;
  slot->reserved = true;
  slot->on_load_done = std::move(done);
  std::lock_guard lock(mutex_);
  if (stopping_) throw Error(ErrorKind::kUnavailable, "the server is shutting down");
  if (slots_.count(spec.name)) {
    throw Error(ErrorKind::kInvalidArgument, "model '" + spec.name + "' is already loaded");
  }
  slots_.emplace(spec.name, slot);  // reserves the name while loading
  queue_load(slot);
}

void ModelRegistry::remove(std::string_view name) {
  SlotRef slot;
  {
    std::lock_guard lock(mutex_);
    auto it = slots_.find(name);
    if (it == slots_.end() || it->second->reserved) {
      // A model still loading through load_async is not "loaded" yet.
      throw Error(ErrorKind::kNotFound, "model '" + std::string(name) + "' is not loaded");
    }
    slot = it->second;
    slots_.erase(it);
    slot->loaded.reset();  // admitted requests hold their own reference
    slot->description.state = ModelState::kUnloaded;
  }
  loaded_cv_.notify_all();
  log_unload(slot->spec.name, "request");
}

std::vector<ModelDescription> ModelRegistry::describe() const {
  std::lock_guard lock(mutex_);
  std::vector<ModelDescription> out;
  out.reserve(slots_.size());
  for (const auto& [name, slot] : slots_) out.push_back(slot->description);
  return out;
}

std::optional<ModelDescription> ModelRegistry::find(std::string_view name) const {
  std::lock_guard lock(mutex_);
  if (name.empty()) {
    if (slots_.size() != 1) return std::nullopt;
    return slots_.begin()->second->description;
  }
  auto it = slots_.find(name);
  if (it == slots_.end()) return std::nullopt;
  return it->second->description;
}

ModelRegistry::SlotRef ModelRegistry::lookup(std::string_view name) const {
  if (name.empty()) {
    if (slots_.size() == 1) return slots_.begin()->second;
    throw Error(ErrorKind::kNotFound,
                slots_.empty() ? "no model is loaded" : "several models are loaded; name one");
  }
  auto it = slots_.find(name);
  if (it == slots_.end()) {
    // Never echo an arbitrary request string at length.
    const std::string shown = is_valid_model_name(name) ? std::string(name) : "(invalid name)";
    throw Error(ErrorKind::kNotFound, "model '" + shown + "' is not loaded");
  }
  return it->second;
}

ModelRegistry::Admitted ModelRegistry::admit(std::string_view name, std::size_t max_in_use) {
  std::lock_guard lock(mutex_);
  if (stopping_) throw Error(ErrorKind::kUnavailable, "the server is shutting down");
  SlotRef slot = lookup(name);
  if (slot->description.state == ModelState::kFailed) {
    throw Error(ErrorKind::kUnavailable,
                "model '" + slot->spec.name + "' failed to load: " + slot->description.load_error);
  }
  if (slot->reserved) {
    throw Error(ErrorKind::kUnavailable, "model '" + slot->spec.name + "' is still loading");
  }
  if (max_in_use != 0 && slot->in_use >= max_in_use) {
    throw Error(ErrorKind::kOverloaded, "model '" + slot->spec.name +
                                            "' has too many requests in flight (limit " +
                                            std::to_string(max_in_use) + " per model)");
  }
  ++slot->in_use;
  slot->last_used = Clock::now();
  return Admitted{slot, slot->spec.name, slot->description.task, slot->loaded};
}

std::shared_ptr<const LoadedModel> ModelRegistry::wait_loaded(const SlotRef& slot,
                                                              OnLoaded on_loaded) {
  std::exception_ptr error;
  {
    std::lock_guard lock(mutex_);
    if (slot->loaded) return slot->loaded;
    if (stopping_) {
      error = unavailable("the server is shutting down");
    } else if (slot->description.state == ModelState::kFailed) {
      error = unavailable("model '" + slot->spec.name +
                          "' failed to load: " + slot->description.load_error);
    } else {
      slot->waiters.push_back(std::move(on_loaded));
      queue_load(slot);  // no-op while a load is queued or running
      return nullptr;
    }
  }
  on_loaded(nullptr, error);
  return nullptr;
}

void ModelRegistry::release(const SlotRef& slot) {
  std::lock_guard lock(mutex_);
  ONEPASS_CHECK(slot->in_use > 0, "release matches admit");
  --slot->in_use;
  slot->last_used = Clock::now();
}

std::shared_ptr<const LoadedModel> ModelRegistry::loaded_now(std::string_view name) {
  std::lock_guard lock(mutex_);
  SlotRef slot = lookup(name);
  if (slot->loaded) {
    slot->last_used = Clock::now();
    return slot->loaded;
  }
  if (slot->description.state == ModelState::kFailed) {
    throw Error(ErrorKind::kUnavailable,
                "model '" + slot->spec.name + "' failed to load: " + slot->description.load_error);
  }
  if (!slot->reserved && !stopping_) queue_load(slot);
  throw Error(ErrorKind::kUnavailable, "model '" + slot->spec.name + "' is loading");
}

void ModelRegistry::queue_load(const SlotRef& slot) {
  if (slot->load_queued) return;
  slot->load_queued = true;
  slot->description.state = ModelState::kLoading;
  load_queue_.push_back(slot);
  loader_cv_.notify_all();
}

std::shared_ptr<const LoadedModel> ModelRegistry::load_folder(const RegistryOptions& options,
                                                              const ModelSpec& spec) {
  std::error_code ec;
  if (!std::filesystem::is_directory(spec.dir, ec)) {
    // The folder's name comes from an MME request's "url": quoted, never echoed whole.
    throw Error(
        ErrorKind::kNotFound,
        "model folder " + quote_client_text(spec.dir.filename().string()) + " does not exist");
  }
  try {
    return load(options, spec, describe_model_folder(spec.name, spec.dir, options.folder));
  } catch (const Error& e) {
    // Inside a folder that exists, a missing file or a bad value makes a model that cannot be
    // served (400), not a missing model (404).
    if (e.kind() == ErrorKind::kUnsupported || e.kind() == ErrorKind::kInternal ||
        e.kind() == ErrorKind::kInvalidModel)
      throw;
    throw Error(ErrorKind::kInvalidModel, e.what());
  }
}

std::shared_ptr<const LoadedModel> ModelRegistry::load(const RegistryOptions& options,
                                                       const ModelSpec& spec,
                                                       ModelDescription description) {
  const auto start = Clock::now();
  log::Fields fields;
  // What was asked (a precision, or auto); once loaded, the span and the log name the one
  // served.
  const std::string asked = model::precision_mode_name(spec.precision.value_or(
      model::PrecisionMode{options.auto_precision, options.load.precision}));
  fields.add("model", spec.name).add("source", spec.dir.string()).add("precision_asked", asked);
  std::pair<std::string_view, std::string_view> span_attributes[] = {
      {"onepass.precision", asked}, {"onepass.model.architecture", ""}};
  try {
    auto model = load_files(options, spec, std::move(description));
    span_attributes[0].second = model->description.precision.precision;
    span_attributes[1].second = model->description.info.architecture;
    record_model_span("onepass.model.load", spec.name, span_attributes, start, Clock::now(), {});
    fields.add("precision", model->description.precision.precision)
        .add_ms("duration_ms", Clock::now() - start)
        .add("rss_bytes", rss_bytes())
        .add("task", task_name(model->description.task));
    log::info("model_load", fields);
    return model;
  } catch (const std::exception& e) {
    fields.add_ms("duration_ms", Clock::now() - start).add("error", e.what());
    log::error("model_load_failed", fields);
    record_model_span("onepass.model.load", spec.name, std::span(span_attributes, 1), start,
                      Clock::now(), e.what());
    throw;
  }
}

std::shared_ptr<const LoadedModel> ModelRegistry::load_files(const RegistryOptions& options,
                                                             const ModelSpec& spec,
                                                             ModelDescription description) {
  auto model = std::make_shared<LoadedModel>();
  model->tokenizer = options.loaders.tokenizer(spec.dir);
  model->tokenizer_settings = tokenizer::read_tokenizer_settings(spec.dir);
  const SpecialToken mask = find_mask_token(*model->tokenizer, model->tokenizer_settings);
  model->mask_token_id = mask.id;
  model->pad_token_id = find_pad_token(*model->tokenizer, model->tokenizer_settings).id;
  model::LoadOptions load = options.load;
  const model::PrecisionMode mode =
      spec.precision.value_or(model::PrecisionMode{options.auto_precision, options.load.precision});
  load.precision = mode.automatic ? model::Precision::kFp32 : mode.fixed;
  const tokenizer::Tokenizer* tok = model->tokenizer.get();
  if (!mode.automatic && load.precision != model::Precision::kFp32 && !load.force_precision) {
    // The reduced-precision gate compares against fp32 on real text, tokenized as served. It
    // runs inside load_encoder, while `model` (and so its tokenizer) is alive.
    load.check_tokenizer = [tok](std::string_view text, std::optional<std::string_view> pair) {
      tokenizer::TruncationOptions truncation;
      truncation.max_length = 128;
      tokenizer::Encoding encoding = tok->encode(text, pair, truncation);
      return model::TokenizedText{std::move(encoding.ids), std::move(encoding.type_ids)};
    };
  }
  if (mode.automatic) {
    const auto& loader = options.loaders.encoder;
    const std::filesystem::path dir = spec.dir;
    model->encoder = load_auto_precision_model(
        [&loader, &dir](const model::LoadOptions& o) { return loader(dir, o); }, spec.name,
        spec.dir, load, *tok, options.auto_precision_options, description.precision);
  } else {
    model->encoder = options.loaders.encoder(spec.dir, load);
    description.precision.precision = kernels::precision_name(load.precision);
    description.precision.mode = kernels::precision_name(load.precision);
    description.precision.source.clear();
    description.precision.verdict.clear();
  }
  ONEPASS_CHECK(model->encoder && model->tokenizer, "loaders return a model");
  for (const auto& dense : description.dense_modules)
    model->dense.push_back(model::heads::DenseModule::load(spec.dir, dense));
  // The engine's view of the checkpoint is authoritative; name and pooling stay as described.
  description.info = model->encoder->info();
  if (mask.id >= 0) description.mask_token = mask.text;
  derive_description(description, options.folder.max_input_length);
  description.state = ModelState::kReady;
  description.load_error.clear();
  model->description = std::move(description);
  model->instance_id = next_instance++;
  return model;
}

std::shared_ptr<const LoadedModel> ModelRegistry::run_load(
    const ModelSpec& spec, std::optional<ModelDescription> description) {
  auto run = std::make_shared<LoadRun>();
  // Each load runs on a thread of its own that ends with it. Loading runs OpenMP regions
  // (packing, the precision gate), and libgomp keeps a thread's worker pool until the thread
  // exits: a second live pool next to the compute thread's makes libgomp count more threads
  // than CPUs and stop spinning between regions, so every region of every later forward pass
  // paid a futex sleep and wake (about 190 context switches per mDeBERTa-base forward, 1.15x
  // slower than `onepass run`). The thread owns what it reads (the options, the spec), so it
  // can be left to finish alone when its deadline passes.
  std::thread worker([run, options = options_, spec, description = std::move(description)] {
    std::shared_ptr<const LoadedModel> model;
    std::exception_ptr error;
    try {
      model = description ? load(*options, spec, *description) : load_folder(*options, spec);
    } catch (...) {
      error = std::current_exception();
    }
    std::lock_guard lock(run->mutex);
    if (run->abandoned && model) {
      log::warn("model_load_discarded",
                log::Fields().add("model", spec.name).add("reason", "load_timeout passed"));
      model.reset();  // frees it here, before the caller can no longer be told
    }
    run->model = std::move(model);
    run->error = error;
    run->finished = true;
    run->cv.notify_all();
  });
  const auto timeout = options_->load_timeout;
  std::unique_lock lock(run->mutex);
  const auto finished = [&] { return run->finished; };
  if (timeout.count() > 0 ? run->cv.wait_for(lock, timeout, finished)
                          : (run->cv.wait(lock, finished), true)) {
    lock.unlock();
    worker.join();
    if (run->error) std::rethrow_exception(run->error);
    return std::move(run->model);
  }
  run->abandoned = true;
  lock.unlock();
  worker.detach();
  {
    std::lock_guard registry_lock(mutex_);
    std::erase_if(abandoned_, [](const std::shared_ptr<LoadRun>& r) {
      std::lock_guard l(r->mutex);
      return r->finished;
    });
    abandoned_.push_back(run);
  }
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(timeout).count();
  log::error("model_load_failed", log::Fields()
                                      .add("model", spec.name)
                                      .add("source", spec.dir.string())
                                      .add("error", "load_timeout passed"));
  throw Error(ErrorKind::kUnavailable, "it did not load within " +
                                           (seconds > 0 ? std::to_string(seconds) + " s"
                                                        : std::to_string(timeout.count()) + " ms") +
                                           " (--load-timeout); its load was abandoned");
}

void ModelRegistry::loader_loop() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    if (load_queue_.empty()) {
      if (options_->idle_unload.count() > 0) {
        // Sweep at a quarter of the idle period: a model is freed at most 25% late.
        loader_cv_.wait_for(lock,
                            std::max(options_->idle_unload / 4, std::chrono::milliseconds(5)));
        sweep_idle(Clock::now());
      } else {
        loader_cv_.wait(lock);
      }
      continue;
    }
    SlotRef slot = load_queue_.front();
    load_queue_.pop_front();
    const ModelSpec spec = slot->spec;
    std::optional<ModelDescription> description;
    if (!slot->reserved) description = slot->description;  // an MME load describes it first
    lock.unlock();

    std::shared_ptr<const LoadedModel> model;
    std::exception_ptr error;
    const auto start = Clock::now();
    try {
      model = run_load(spec, std::move(description));
    } catch (...) {
      error = std::current_exception();
    }

    lock.lock();
    slot->load_queued = false;
    slot->initial_done = true;
    if (slot->reserved) {
      OnLoadDone done = std::exchange(slot->on_load_done, nullptr);
      if (model) {
        slot->loaded = model;
        slot->description = model->description;
        slot->load_seconds = std::chrono::duration<double>(Clock::now() - start).count();
        slot->last_used = Clock::now();
        slot->reserved = false;
      } else {
        auto it = slots_.find(spec.name);
        if (it != slots_.end() && it->second == slot) slots_.erase(it);
        error = load_failure(spec.name, error);
      }
      lock.unlock();
      loaded_cv_.notify_all();
      if (done) done(error);  // empty when shutdown() already answered it
      lock.lock();
      continue;
    }
    if (model) {
      slot->loaded = model;
      slot->description = model->description;
      slot->load_seconds = std::chrono::duration<double>(Clock::now() - start).count();
      slot->last_used = Clock::now();
    } else {
      slot->description.state = ModelState::kFailed;
      slot->description.load_error = failure_message(error);
      error = unavailable("model '" + slot->spec.name +
                          "' failed to load: " + slot->description.load_error);
    }
    std::vector<OnLoaded> waiters = std::move(slot->waiters);
    slot->waiters.clear();
    lock.unlock();
    loaded_cv_.notify_all();
    for (auto& w : waiters) w(model, error);
    lock.lock();
  }
}

void ModelRegistry::sweep_idle(Clock::time_point now) {
  for (auto& [name, slot] : slots_) {
    if (slot->loaded && slot->in_use == 0 && !slot->load_queued &&
        now - slot->last_used >= options_->idle_unload) {
      slot->loaded.reset();
      slot->description.state = ModelState::kUnloaded;
      log_unload(name, "idle");
    }
  }
}

bool ModelRegistry::ready() const {
  std::lock_guard lock(mutex_);
  bool any_usable = slots_.empty();
  for (const auto& [name, slot] : slots_) {
    if (slot->eager && !slot->initial_done) return false;
    if (slot->description.state != ModelState::kFailed) any_usable = true;
  }
  return any_usable;
}

bool ModelRegistry::wait_initial_loads(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  return loaded_cv_.wait_for(lock, timeout, [&] {
    if (stopping_) return true;
    return std::all_of(slots_.begin(), slots_.end(),
                       [](const auto& entry) { return entry.second->initial_done; });
  });
}

std::vector<ModelGauges> ModelRegistry::gauges() const {
  std::lock_guard lock(mutex_);
  std::vector<ModelGauges> out;
  for (const auto& [name, slot] : slots_) {
    ModelGauges g;
    g.model = name;
    g.loaded = slot->loaded != nullptr;
    g.failed = slot->description.state == ModelState::kFailed;
    g.load_seconds = slot->load_seconds;
    if (slot->loaded) g.precision = slot->loaded->description.precision;
    out.push_back(std::move(g));
  }
  return out;
}

}  // namespace onepass::runtime

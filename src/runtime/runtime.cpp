#include "runtime/runtime.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>

#include "base/error.h"
#include "model/layers/cpu_pinning.h"
#include "runtime/input_limits.h"
#include "runtime/job.h"
#include "runtime/metrics.h"
#include "runtime/model_registry.h"
#include "runtime/prompts.h"
#include "runtime/scheduler.h"
#include "runtime/tasks.h"

namespace onepass::runtime {
namespace {

using Clock = std::chrono::steady_clock;

void check_options(const RuntimeOptions& o) {
  auto require = [](bool ok, const char* what) {
    if (!ok) throw Error(ErrorKind::kInvalidArgument, what);
  };
  // Named as RuntimeOptions names them: `onepass serve` checks its flags first, naming those
  // (apps/onepass/serve_settings.h check_runtime_settings).
  require(o.max_batch_tokens > 0, "max_batch_tokens must be positive");
  require(o.max_batch_requests > 0, "max_batch_requests must be positive");
  require(o.max_concurrent_requests > 0, "max_concurrent_requests must be positive");
  require(o.threads >= 0, "threads must not be negative");
  require(o.compute_threads >= 1 && o.tokenizer_threads >= 1,
          "the runtime needs at least one compute and one tokenizer thread");
  require(o.max_wait.count() >= 0 && o.idle_unload.count() >= 0 && o.load_timeout.count() >= 0,
          "durations must not be negative");
  require(!(o.default_prompt_name && o.default_prompt),
          "default_prompt_name and default_prompt cannot both be given");
}

}  // namespace

ModelSpec parse_model_spec(std::string_view spec) {
  ModelSpec out;
  if (const auto hash = spec.rfind('#'); hash != std::string_view::npos) {
    out.precision = model::precision_mode_from_name(std::string(spec.substr(hash + 1)));
    spec = spec.substr(0, hash);
  }
  const auto eq = spec.find('=');
  if (eq == std::string_view::npos) {
    out.dir = std::filesystem::path(spec);
    // "models/nli/" names the model "nli".
    auto dir = out.dir.lexically_normal();
    out.name = (dir.has_filename() ? dir.filename() : dir.parent_path().filename()).string();
  } else {
    out.name = std::string(spec.substr(0, eq));
    out.dir = std::filesystem::path(spec.substr(eq + 1));
  }
  if (out.dir.empty())
    throw Error(ErrorKind::kInvalidArgument, "a model needs a folder (NAME=DIR)");
  if (!is_valid_model_name(out.name)) {
    throw Error(ErrorKind::kInvalidArgument,
                "invalid model name '" + out.name +
                    "' (use 1-128 letters, digits, '.', '_' or '-'; NAME=DIR sets it)");
  }
  return out;
}

struct Runtime::Impl {
  RuntimeOptions options;
  Metrics metrics;
  std::unique_ptr<Scheduler> scheduler;
  std::unique_ptr<ModelRegistry> registry;

  // `admitted` holds the --max-concurrent-requests slots; `in_flight` also counts the answers
  // being handed over (wait_idle, the gauge). A slot is freed before its answer leaves, so a
  // client that sends its next request the instant it reads an answer finds the slot free: K
  // closed-loop clients never see 429.
  std::atomic<std::size_t> admitted{0};
  std::atomic<std::size_t> in_flight{0};
  std::atomic<bool> draining{false};
  std::mutex idle_mutex;
  std::condition_variable idle_cv;

  void complete(const JobRef& job) {
    InferenceResult& result = job->result;
    result.timings.total = Clock::now() - job->admitted;
    registry->release(job->slot);
    metrics.record_request(job->model_name, job->request.items.size(), result.total_tokens,
                           result.timings, result.error == nullptr);
    Completion done = std::move(job->done);
    admitted.fetch_sub(1);
    try {
      done(std::move(result));
    } catch (...) {
      // A completion must not throw (service.h); if one does, it cannot take a runtime thread
      // down with it, and its slot is still given back below.
    }
    // After `done`, so that wait_idle() returns only once every answer was handed over.
    if (in_flight.fetch_sub(1) == 1) {
      std::lock_guard lock(idle_mutex);
      idle_cv.notify_all();
    }
  }

  void admit_in_flight() {
    std::size_t current = admitted.load();
    do {
      if (current >= options.max_concurrent_requests) {
        throw Error(ErrorKind::kOverloaded, "too many requests in flight (limit " +
                                                std::to_string(options.max_concurrent_requests) +
                                                ")");
      }
    } while (!admitted.compare_exchange_weak(current, current + 1));
    in_flight.fetch_add(1);
  }

  void leave_in_flight() {
    admitted.fetch_sub(1);
    if (in_flight.fetch_sub(1) == 1) {
      std::lock_guard lock(idle_mutex);
      idle_cv.notify_all();
    }
  }
};

Runtime::Runtime(RuntimeOptions options) : impl_(std::make_unique<Impl>()) {
  check_options(options);
  ModelLoaders defaults = default_model_loaders();
  if (!options.loaders.encoder) options.loaders.encoder = defaults.encoder;
  if (!options.loaders.tokenizer) options.loaders.tokenizer = defaults.tokenizer;
  impl_->options = std::move(options);
  const RuntimeOptions& o = impl_->options;
  // Each compute thread's team gets CPUs of its own, so that two teams never share a core.
  const int threads_per_forward =
      o.threads > 0 ? o.threads : std::max(1, model::usable_cpus() / o.compute_threads);

  SchedulerOptions scheduler_options;
  scheduler_options.limits.max_batch_tokens = o.max_batch_tokens;
  scheduler_options.limits.max_batch_items = o.max_batch_requests;
  scheduler_options.limits.max_wait = o.max_wait;
  scheduler_options.limits.max_turn = o.max_batch_turn;
  scheduler_options.compute_threads = o.compute_threads;
  scheduler_options.tokenizer_threads = o.tokenizer_threads;
  scheduler_options.auto_truncate = o.auto_truncate;
  scheduler_options.max_windows_per_request = o.max_windows_per_request;
  scheduler_options.threads_per_forward = threads_per_forward;
  scheduler_options.pin_threads = o.pin_threads;
  scheduler_options.precision = kernels::precision_name(o.precision);
  Impl* impl = impl_.get();
  impl_->scheduler = std::make_unique<Scheduler>(
      scheduler_options, impl_->metrics, [impl](const JobRef& job) { impl->complete(job); });

  RegistryOptions registry_options;
  registry_options.loaders = o.loaders;
  registry_options.load.threads = threads_per_forward;
  registry_options.load.precision = o.precision;
  registry_options.load.force_precision = o.force_precision;
  registry_options.auto_precision = o.auto_precision;
  registry_options.auto_precision_options = o.auto_precision_options;
  registry_options.folder.max_input_length = o.max_input_length;
  registry_options.folder.pooling = o.pooling;
  registry_options.folder.default_prompt_name = o.default_prompt_name;
  registry_options.folder.default_prompt = o.default_prompt;
  registry_options.idle_unload = o.idle_unload;
  registry_options.load_timeout = o.load_timeout;
  impl_->registry = std::make_unique<ModelRegistry>(registry_options);
  try {
    for (const ModelSpec& spec : o.models) impl_->registry->add(spec, !o.lazy);
  } catch (...) {
    impl_->scheduler->stop();
    impl_->registry->shutdown();
    throw;
  }
}

Runtime::~Runtime() {
  // Scheduler first: queued jobs fail while the registry can still release their models. The
  // registry then fails the requests still waiting for a load through the stopped scheduler.
  impl_->scheduler->stop();
  impl_->registry->shutdown();
}

const RuntimeOptions& Runtime::options() const { return impl_->options; }

bool Runtime::wait_ready(std::chrono::milliseconds timeout) {
  impl_->registry->wait_initial_loads(timeout);
  return ready();
}

std::vector<ModelDescription> Runtime::models() const {
  auto described = impl_->registry->describe();
  for (ModelDescription& d : described)
    d.max_input_bytes = input_byte_limit(d, impl_->options.max_input_bytes);
  return described;
}

std::optional<ModelDescription> Runtime::find_model(std::string_view name) const {
  auto described = impl_->registry->find(name);
  if (described)
    described->max_input_bytes = input_byte_limit(*described, impl_->options.max_input_bytes);
  return described;
}

void Runtime::submit(InferenceRequest request, Completion done) {
  Impl& impl = *impl_;
  if (impl.draining.load()) {
    throw Error(ErrorKind::kUnavailable, "the server is shutting down");
  }
  if (request.items.empty()) throw Error(ErrorKind::kInvalidArgument, "no inputs");
  ONEPASS_CHECK(done != nullptr, "submit needs a completion");

  // Checked before admission so that a request for the wrong task costs no slot.
  const auto described = impl.registry->find(request.model);
  if (described && !task_produces(described->task, request.output)) {
    throw Error(ErrorKind::kInvalidArgument,
                task_mismatch_message(*described, output_name(request.output)));
  }
  if (described) {
    // Before admission and tokenization: a multi-megabyte text costs neither a slot nor
    // tokenizer time, whatever the truncation.
    const std::size_t limit = input_byte_limit(*described, impl.options.max_input_bytes);
    for (const InferenceItem& item : request.items) {
      // A prompt the model does not have is refused here, before it costs a slot.
      prompt_for_item(*described, request, item);
      if (item.pretokenized) continue;
      check_input_bytes(item.text, limit, item.text_pair ? "the first text of a pair" : "an input");
      if (item.text_pair) check_input_bytes(*item.text_pair, limit, "the second text of a pair");
    }
    if (request.output == OutputKind::kFillMask)
      check_fill_mask_target_bytes(request.fill_mask.targets, limit);
  }

  auto job = std::make_shared<Job>();
  job->admitted = Clock::now();
  job->done = std::move(done);
  job->request = std::move(request);

  impl.admit_in_flight();
  ModelRegistry::Admitted admitted;
  try {
    const std::size_t per_model = impl.options.max_queued_requests_per_model != 0
                                      ? impl.options.max_queued_requests_per_model
                                      : impl.options.max_concurrent_requests;
    admitted = impl.registry->admit(job->request.model, per_model);
  } catch (...) {
    impl.leave_in_flight();
    throw;  // the completion was never handed over; the caller answers from the exception
  }
  // Admitted: from here on the job completes exactly once through `done`.
  job->model_name = admitted.name;
  job->slot = admitted.slot;
  if (job->request.output == OutputKind::kPooled) {
    job->pooling = job->request.pooling.value_or(described ? described->pooling : Pooling::kMean);
  }
  if (!admitted.model) {
    Scheduler* scheduler = impl.scheduler.get();
    admitted.model = impl.registry->wait_loaded(
        admitted.slot,
        [scheduler, job](std::shared_ptr<const LoadedModel> model, std::exception_ptr error) {
          if (!model) {
            scheduler->fail(job, error);
            return;
          }
          job->model = std::move(model);
          scheduler->enqueue(job);
        });
  }
  if (admitted.model) {
    job->model = std::move(admitted.model);
    impl.scheduler->enqueue(job);
  }
}

tokenizer::Encoding Runtime::tokenize(std::string_view model, std::string_view text,
                                      std::optional<std::string_view> pair,
                                      bool add_special_tokens) const {
  if (impl_->draining.load()) throw Error(ErrorKind::kUnavailable, "the server is shutting down");
  auto loaded = impl_->registry->loaded_now(model);
  const std::size_t limit = input_byte_limit(loaded->description, impl_->options.max_input_bytes);
  check_input_bytes(text, limit, "an input");
  if (pair) check_input_bytes(*pair, limit, "the second text of a pair");
  return loaded->tokenizer->encode(text, pair, {}, add_special_tokens);
}

std::string Runtime::decode(std::string_view model, std::span<const std::int32_t> ids,
                            bool skip_special_tokens) const {
  if (impl_->draining.load()) throw Error(ErrorKind::kUnavailable, "the server is shutting down");
  auto loaded = impl_->registry->loaded_now(model);
  return loaded->tokenizer->decode(ids, skip_special_tokens);
}

void Runtime::load_model(const std::string& name, const std::filesystem::path& dir, LoadDone done) {
  impl_->registry->load_async(ModelSpec{name, dir}, std::move(done));
}

void Runtime::unload_model(const std::string& name) { impl_->registry->remove(name); }

bool Runtime::ready() const { return !impl_->draining.load() && impl_->registry->ready(); }

void Runtime::begin_drain() { impl_->draining.store(true); }

bool Runtime::wait_idle(std::chrono::milliseconds timeout) {
  std::unique_lock lock(impl_->idle_mutex);
  return impl_->idle_cv.wait_for(lock, timeout, [&] { return impl_->in_flight.load() == 0; });
}

std::string Runtime::render_metrics() const {
  RuntimeGauges gauges;
  gauges.in_flight_requests = impl_->in_flight.load();
  gauges.models = impl_->registry->gauges();
  const auto depths = impl_->scheduler->queue_depths();
  for (ModelGauges& m : gauges.models) {
    auto it = depths.find(m.model);
    if (it != depths.end()) {
      m.queue_depth = it->second.total;
      m.batch_queue_depth = it->second.batch;
    }
  }
  return impl_->metrics.render(gauges);
}

void Runtime::record_http_request(std::string_view route, std::string_view model, int status,
                                  std::chrono::nanoseconds duration) {
  impl_->metrics.record_http_request(route, model, status, duration);
}

}  // namespace onepass::runtime

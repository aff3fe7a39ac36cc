// Model registry and lifecycle: which models exist, their state (unloaded, loading, ready,
// failed), loading them (eagerly at start, lazily on a first request, on an MME load), idle
// unload and transparent reload, and per-model admission (requests queued or running).
//
// One loader thread performs every load one at a time (eager, lazy, reload and MME loads alike,
// never on an HTTP or compute thread) and the idle sweep; requests that arrive while their model
// loads wait as callbacks, run once the load ends (with the model, or with the error). Each load
// runs on a thread of its own under `load_timeout`: when that passes the load is abandoned (its
// thread is left to finish and its result dropped), the model fails with a message saying so,
// and the loader goes on with the next load. Thread-safe; callbacks never run under the
// registry's lock.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "runtime/loaded_model.h"
#include "runtime/metrics.h"
#include "runtime/model_config.h"
#include "runtime/runtime.h"

namespace onepass::runtime {

struct RegistryOptions {
  ModelLoaders loaders;  // both set
  model::LoadOptions load;
  FolderOptions folder;         // how each folder is described (model_config.h)
  bool auto_precision = false;  // --precision auto (RuntimeOptions)
  AutoPrecisionOptions auto_precision_options;
  std::chrono::milliseconds idle_unload{0};
  std::chrono::milliseconds load_timeout{0};  // 0: loads have no deadline
};

class ModelRegistry {
 public:
  // Called once with the model, or with an error (model null) when its load failed.
  using OnLoaded = std::function<void(std::shared_ptr<const LoadedModel>, std::exception_ptr)>;
  // Called once with null when an MME load succeeded, else with its error.
  using OnLoadDone = std::function<void(std::exception_ptr)>;
  struct Slot;  // one registered model; opaque outside the registry
  using SlotRef = std::shared_ptr<Slot>;

  explicit ModelRegistry(RegistryOptions options);
  ~ModelRegistry();  // shutdown()
  // Stops the loader thread (after the load it is running); callbacks still waiting for a load
  // then run with kUnavailable, on this thread. Admission refuses from now on.
  void shutdown();
  ModelRegistry(const ModelRegistry&) = delete;
  ModelRegistry& operator=(const ModelRegistry&) = delete;

  // Registers a model from its folder; a broken folder becomes kFailed. `eager` queues its load
  // now and makes readiness wait for it. Throws kInvalidArgument for a bad or taken name.
  void add(const ModelSpec& spec, bool eager);
  // MME load. Throws kInvalidArgument (bad or taken name) or kUnavailable (shutting down) on the
  // caller's thread; otherwise reserves the name, queues the load and returns at once. `done`
  // then runs once on the loader thread (or the one calling shutdown()) with null, or with:
  // kNotFound (no such folder), kInvalidModel or kUnsupported (it cannot load; the message says
  // why), std::bad_alloc (out of memory), kUnavailable (load_timeout passed, or shutting down).
  void load_async(const ModelSpec& spec, OnLoadDone done);
  // MME unload. Throws kNotFound. Requests already admitted still complete.
  void remove(std::string_view name);

  std::vector<ModelDescription> describe() const;
  std::optional<ModelDescription> find(std::string_view name) const;

  // Admission of one request for `name` (empty: the only model). Throws kNotFound, kUnavailable
  // (failed model, shutting down) or kOverloaded (`max_in_use` requests already queued or
  // running for it). On success the caller owns one use of the slot (release() it exactly once)
  // and gets the loaded model, or null: then it calls wait_loaded().
  struct Admitted {
    SlotRef slot;
    std::string name;
    ModelTask task = ModelTask::kClassifier;
    std::shared_ptr<const LoadedModel> model;
  };
  Admitted admit(std::string_view name, std::size_t max_in_use);
  // The slot's model when loaded now; else null, and `on_loaded` runs once on the loader thread
  // when a load (queued now if none is) ends, or on this thread when the model failed.
  std::shared_ptr<const LoadedModel> wait_loaded(const SlotRef& slot, OnLoaded on_loaded);
  void release(const SlotRef& slot);

  // The loaded model now, without waiting; when it is not loaded, a load is queued and
  // kUnavailable thrown. For synchronous calls (TEI /tokenize).
  std::shared_ptr<const LoadedModel> loaded_now(std::string_view name);

  // Every eager model finished its first load (ready or failed), and at least one model is not
  // failed (or none is registered).
  bool ready() const;
  bool wait_initial_loads(std::chrono::milliseconds timeout);
  std::vector<ModelGauges> gauges() const;

 private:
  SlotRef lookup(std::string_view name) const;  // under mutex_; throws kNotFound
  void queue_load(const SlotRef& slot);         // under mutex_
  // These run on a load's own thread, which may outlive the registry when the load is
  // abandoned: they touch nothing but their arguments. load() logs the outcome (source,
  // duration, RSS, precision); load_folder() describes the folder first (MME loads).
  static std::shared_ptr<const LoadedModel> load(const RegistryOptions& options,
                                                 const ModelSpec& spec,
                                                 ModelDescription description);
  static std::shared_ptr<const LoadedModel> load_files(const RegistryOptions& options,
                                                       const ModelSpec& spec,
                                                       ModelDescription description);
  static std::shared_ptr<const LoadedModel> load_folder(const RegistryOptions& options,
                                                        const ModelSpec& spec);
  struct LoadRun;
  // Runs one load on a thread of its own and waits at most load_timeout for it; no lock held.
  std::shared_ptr<const LoadedModel> run_load(const ModelSpec& spec,
                                              std::optional<ModelDescription> description);
  void loader_loop();
  void sweep_idle(std::chrono::steady_clock::time_point now);  // under mutex_

  std::shared_ptr<const RegistryOptions> options_;  // shared with abandoned loads
  mutable std::mutex mutex_;
  std::condition_variable loader_cv_;
  std::condition_variable loaded_cv_;
  std::map<std::string, SlotRef, std::less<>> slots_;
  std::deque<SlotRef> load_queue_;
  std::vector<std::shared_ptr<LoadRun>> abandoned_;  // loads past their deadline
  bool stopping_ = false;
  std::thread loader_;
};

}  // namespace onepass::runtime

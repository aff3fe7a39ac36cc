// Model registry and lifecycle: which models exist, their state (unloaded, loading, ready,
// failed), loading them (eagerly at start, lazily on a first request, on an MME load), idle
// unload and transparent reload, and per-model admission (requests queued or running).
//
// One loader thread performs background loads one at a time and the idle sweep; requests that
// arrive while their model loads wait as callbacks, run once the load ends (with the model, or
// with the error). Thread-safe; callbacks never run under the registry's lock.
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
  FolderOptions folder;  // how each folder is described (model_config.h)
  std::chrono::milliseconds idle_unload{0};
};

class ModelRegistry {
 public:
  // Called once with the model, or with an error (model null) when its load failed.
  using OnLoaded = std::function<void(std::shared_ptr<const LoadedModel>, std::exception_ptr)>;
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
  // MME load on the caller's thread. Throws kInvalidArgument (bad or taken name),
  // kInvalidModel (cannot load; the message says why).
  void load_now(const ModelSpec& spec);
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
  // Both no lock held; load() logs the outcome (source, duration, RSS, precision).
  std::shared_ptr<const LoadedModel> load(const ModelSpec& spec, ModelDescription description);
  std::shared_ptr<const LoadedModel> load_files(const ModelSpec& spec,
                                                ModelDescription description);
  void loader_loop();
  void sweep_idle(std::chrono::steady_clock::time_point now);  // under mutex_

  RegistryOptions options_;
  mutable std::mutex mutex_;
  std::condition_variable loader_cv_;
  std::condition_variable loaded_cv_;
  std::map<std::string, SlotRef, std::less<>> slots_;
  std::deque<SlotRef> load_queue_;
  std::uint64_t next_instance_ = 1;
  bool stopping_ = false;
  std::thread loader_;
};

}  // namespace onepass::runtime

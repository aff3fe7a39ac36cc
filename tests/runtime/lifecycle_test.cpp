// The runtime's lifecycle with fake models: readiness, lazy load with waiters, failed models,
// idle unload and reload, MME load/unload, names, admission, fairness, drain.
#include <gtest/gtest.h>

#include <fstream>
#include <future>
#include <new>

#include "call.h"
#include "tests/support/temp_dir.h"

namespace onepass::runtime {
namespace {

using namespace testing;
using onepass::testing::TempDir;
using namespace std::chrono_literals;

// An MME load as POST /models runs it: the error its callback got (null on success), or a
// failure when no answer came within `wait`.
std::exception_ptr load_and_wait(Runtime& rt, const std::string& name,
                                 const std::filesystem::path& dir,
                                 std::chrono::milliseconds wait = 10s) {
  auto promise = std::make_shared<std::promise<std::exception_ptr>>();
  auto answer = promise->get_future();
  rt.load_model(name, dir, [promise](std::exception_ptr error) { promise->set_value(error); });
  if (answer.wait_for(wait) != std::future_status::ready) {
    ADD_FAILURE() << "the load of '" << name << "' was not answered in time";
    return std::make_exception_ptr(std::runtime_error("no answer"));
  }
  return answer.get();
}

// The kind of a load's error; nullopt for success, kInternal for anything but an Error.
std::optional<ErrorKind> load_error_kind(const std::exception_ptr& error,
                                         std::string* message = nullptr) {
  if (!error) return std::nullopt;
  try {
    std::rethrow_exception(error);
  } catch (const Error& e) {
    if (message) *message = e.what();
    return e.kind();
  } catch (...) {
    return ErrorKind::kInternal;
  }
}

void ignore_load(std::exception_ptr) {}

std::optional<ModelState> state_of(const Runtime& rt, const std::string& name) {
  auto d = rt.find_model(name);
  if (!d) return std::nullopt;
  return d->state;
}

TEST(Lifecycle, EagerModelsMakeReadinessWait) {
  FakeWorld world;
  world.load_gate.close();
  Runtime rt(fake_options(world));
  EXPECT_FALSE(rt.ready());
  ASSERT_TRUE(world.load_gate.wait_blocked(1));
  EXPECT_EQ(state_of(rt, "nli"), ModelState::kLoading);
  EXPECT_FALSE(rt.wait_ready(20ms));
  world.load_gate.open();
  EXPECT_TRUE(rt.wait_ready(5s));
  for (const auto& d : rt.models()) EXPECT_EQ(d.state, ModelState::kReady) << d.name;
  EXPECT_EQ(metric(rt, "onepass_loaded_models"), 3);
}

TEST(Lifecycle, LazyLoadHoldsTheFirstRequestsUntilLoaded) {
  FakeWorld world;
  world.load_gate.close();
  RuntimeOptions o = fake_options(world);
  o.lazy = true;
  Runtime rt(o);
  EXPECT_TRUE(rt.ready());  // lazy models do not hold readiness
  EXPECT_EQ(state_of(rt, "nli"), ModelState::kUnloaded);
  EXPECT_EQ(world.load_count("bert-tiny-nli"), 0);

  std::vector<Pending> waiting;
  for (int i = 0; i < 5; ++i) waiting.push_back(submit(rt, ids("nli", {{1, 20 + i, 2}})));
  ASSERT_TRUE(world.load_gate.wait_blocked(1));
  EXPECT_EQ(state_of(rt, "nli"), ModelState::kLoading);
  EXPECT_FALSE(waiting[0].done(20));
  // Still admitted while loading.
  waiting.push_back(submit(rt, ids("nli", {{1, 40, 2}})));
  world.load_gate.open();
  for (std::size_t i = 0; i < waiting.size(); ++i) {
    const InferenceResult r = waiting[i].get();
    ASSERT_FALSE(r.error) << i;
    const std::int32_t id = i < 5 ? 20 + static_cast<std::int32_t>(i) : 40;
    EXPECT_FLOAT_EQ(r.items[0].values[0], fake_logits({1, id, 2}, {0, 0, 0}, 3)[0]);
  }
  EXPECT_EQ(world.load_count("bert-tiny-nli"), 1);
  EXPECT_EQ(world.load_count("bert-tiny-embed"), 0);
  EXPECT_EQ(state_of(rt, "nli"), ModelState::kReady);
}

TEST(Lifecycle, AFailedModelIsReportedByNameAndTheOthersServe) {
  FakeWorld world;
  TempDir tmp;
  const auto broken = tmp.path() / "broken-model";
  std::filesystem::create_directory(broken);
  std::filesystem::copy_file(fixture_model("bert-tiny-nli") / "config.json",
                             broken / "config.json");
  const auto no_config = tmp.path() / "empty";
  std::filesystem::create_directory(no_config);
  RuntimeOptions o = fake_options(world);
  o.models.push_back({"broken", broken});
  o.models.push_back({"empty", no_config});
  Runtime rt(o);
  ASSERT_TRUE(rt.wait_ready(5s));
  auto d = rt.find_model("broken");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->state, ModelState::kFailed);
  EXPECT_NE(d->load_error.find("truncated"), std::string::npos) << d->load_error;
  EXPECT_EQ(rt.find_model("empty")->state, ModelState::kFailed);
  EXPECT_NE(rt.find_model("empty")->load_error.find("config.json"), std::string::npos);
  EXPECT_EQ(rt.find_model("empty")->load_error.find(tmp.path().string()), std::string::npos);

  std::string message;
  EXPECT_EQ(thrown_kind(
                [&] {
                  submit(rt, ids("broken", {{1, 5, 2}}));
                },
                &message),
            ErrorKind::kUnavailable);
  EXPECT_NE(message.find("broken"), std::string::npos);
  EXPECT_NE(message.find("truncated"), std::string::npos);
  EXPECT_FALSE(submit(rt, ids("nli", {{1, 5, 2}})).get().error);
  // The slot is given back right after the completion returns.
  EXPECT_TRUE(eventually([&] { return metric(rt, "onepass_inflight_requests") == 0; }));
}

TEST(Lifecycle, IdleModelsUnloadAndReloadTransparently) {
  FakeWorld world;
  RuntimeOptions o = fake_options(world);
  o.idle_unload = 30ms;
  Runtime rt(o);
  ASSERT_TRUE(rt.wait_ready(5s));
  ASSERT_TRUE(eventually([&] { return state_of(rt, "nli") == ModelState::kUnloaded; }));
  EXPECT_TRUE(rt.ready());  // unloaded for idleness is not unready
  EXPECT_EQ(metric(rt, "onepass_loaded_models", {}) <= 3, true);
  const InferenceResult r = submit(rt, ids("nli", {{1, 50, 2}})).get();
  ASSERT_FALSE(r.error);
  EXPECT_FLOAT_EQ(r.items[0].values[2], fake_logits({1, 50, 2}, {0, 0, 0}, 3)[2]);
  EXPECT_EQ(world.load_count("bert-tiny-nli"), 2);
  ASSERT_TRUE(eventually([&] { return state_of(rt, "nli") == ModelState::kUnloaded; }));
}

TEST(Lifecycle, ABusyModelIsNotUnloaded) {
  FakeWorld world;
  world.forward_gate.close();
  RuntimeOptions o = fake_options(world);
  o.idle_unload = 10ms;
  Runtime rt(o);
  ASSERT_TRUE(rt.wait_ready(5s));
  Pending p = submit(rt, ids("nli", {{1, 5, 2}}));
  ASSERT_TRUE(world.forward_gate.wait_blocked(1));
  std::this_thread::sleep_for(60ms);  // several idle periods while the request runs
  EXPECT_EQ(state_of(rt, "nli"), ModelState::kReady);
  world.forward_gate.open();
  EXPECT_FALSE(p.get().error);
}

TEST(Lifecycle, ModelManagementLoadsAndUnloads) {
  FakeWorld world;
  RuntimeOptions o;
  o.loaders = world.loaders();
  Runtime rt(o);
  EXPECT_TRUE(rt.ready());
  EXPECT_TRUE(rt.models().empty());
  EXPECT_EQ(thrown_kind([&] { submit(rt, ids("", {{1, 2}})); }), ErrorKind::kNotFound);

  EXPECT_FALSE(load_and_wait(rt, "nli", fixture_model("bert-tiny-nli")));
  EXPECT_EQ(state_of(rt, "nli"), ModelState::kReady);
  EXPECT_EQ(thrown_kind([&] { rt.load_model("nli", fixture_model("bert-tiny-nli"), ignore_load); }),
            ErrorKind::kInvalidArgument);
  EXPECT_EQ(
      thrown_kind([&] { rt.load_model("../x", fixture_model("bert-tiny-nli"), ignore_load); }),
      ErrorKind::kInvalidArgument);
  // A folder without a model in it cannot be served (400); a folder that is not there is not
  // found (404), as docs/api.md says of POST /models.
  TempDir tmp;
  std::string message;
  EXPECT_EQ(load_error_kind(load_and_wait(rt, "other", tmp.path()), &message),
            ErrorKind::kInvalidModel);
  EXPECT_NE(message.find("config.json"), std::string::npos) << message;
  EXPECT_FALSE(rt.find_model("other"));
  EXPECT_EQ(load_error_kind(load_and_wait(rt, "other", tmp.path() / "missing"), &message),
            ErrorKind::kNotFound);
  EXPECT_NE(message.find("does not exist"), std::string::npos) << message;
  EXPECT_FALSE(rt.find_model("other"));
  // The only model answers requests without a name.
  EXPECT_FALSE(submit(rt, ids("", {{1, 5, 2}})).get().error);

  rt.unload_model("nli");
  EXPECT_FALSE(rt.find_model("nli"));
  EXPECT_EQ(thrown_kind([&] { submit(rt, ids("nli", {{1, 5, 2}})); }), ErrorKind::kNotFound);
  EXPECT_EQ(thrown_kind([&] { rt.unload_model("nli"); }), ErrorKind::kNotFound);
  EXPECT_FALSE(load_and_wait(rt, "nli", fixture_model("bert-tiny-nli")));
  EXPECT_FALSE(submit(rt, ids("nli", {{1, 5, 2}})).get().error);
}

TEST(Lifecycle, AnMmeLoadThatRunsOutOfMemoryStaysOutOfMemory) {
  FakeWorld world;
  RuntimeOptions o;
  o.loaders = world.loaders();
  o.loaders.encoder = [](const std::filesystem::path&,
                         const model::LoadOptions&) -> std::unique_ptr<model::Encoder> {
    throw std::bad_alloc();
  };
  Runtime rt(o);
  const auto error = load_and_wait(rt, "nli", fixture_model("bert-tiny-nli"));
  ASSERT_TRUE(error);
  EXPECT_THROW(std::rethrow_exception(error), std::bad_alloc);  // 507, not "invalid model"
  EXPECT_FALSE(rt.find_model("nli"));
}

// A load is never run on the caller's thread and has a deadline: past --load-timeout it is
// abandoned and answered 503-style (kUnavailable), the name is free again, readiness and the
// other models keep answering, and the loader goes on with the next load.
TEST(Lifecycle, ALoadPastItsDeadlineIsAbandonedAndTheLoaderGoesOn) {
  FakeWorld world;
  RuntimeOptions o = fake_options(world);
  o.load_timeout = 200ms;
  Runtime rt(o);
  ASSERT_TRUE(rt.wait_ready(5s));
  world.load_gate.close();
  auto promise = std::make_shared<std::promise<std::exception_ptr>>();
  auto answer = promise->get_future();
  const auto start = std::chrono::steady_clock::now();
  rt.load_model("held", fixture_model("bert-tiny-nli"),
                [promise](std::exception_ptr error) { promise->set_value(error); });
  EXPECT_LT(std::chrono::steady_clock::now() - start, 1s);  // returned before the load ended
  ASSERT_TRUE(world.load_gate.wait_blocked(1));
  EXPECT_TRUE(rt.ready());
  EXPECT_FALSE(submit(rt, ids("nli", {{1, 5, 2}})).get().error);
  ASSERT_EQ(answer.wait_for(5s), std::future_status::ready);
  std::string message;
  EXPECT_EQ(load_error_kind(answer.get(), &message), ErrorKind::kUnavailable);
  EXPECT_NE(message.find("--load-timeout"), std::string::npos) << message;
  EXPECT_FALSE(rt.find_model("held"));
  // The abandoned load ends once the gate opens (its model is dropped); the name loads again.
  world.load_gate.open();
  EXPECT_FALSE(load_and_wait(rt, "held", fixture_model("bert-tiny-nli")));
  EXPECT_FALSE(submit(rt, ids("held", {{1, 5, 2}})).get().error);
}

TEST(Lifecycle, UnloadWithRequestsInFlightLetsThemFinish) {
  FakeWorld world;
  world.forward_gate.close();
  RuntimeOptions o = fake_options(world);
  Runtime rt(o);
  ASSERT_TRUE(rt.wait_ready(5s));
  Pending running = submit(rt, ids("nli", {{1, 5, 2}}));
  ASSERT_TRUE(world.forward_gate.wait_blocked(1));
  Pending queued = submit(rt, ids("nli", {{1, 6, 2}}));
  rt.unload_model("nli");
  world.forward_gate.open();
  EXPECT_FALSE(running.get().error);
  EXPECT_FALSE(queued.get().error);
}

TEST(Lifecycle, RequestModelNamesNeverReachTheFilesystem) {
  FakeWorld world;
  Runtime rt(fake_options(world));
  ASSERT_TRUE(rt.wait_ready(5s));
  const std::vector<std::string> names = {
      "../nli",     "/nli", "%2e%2e", std::string("nli\0x", 5), std::string(4096, 'a'),
      "nli/../nli", "."};
  for (const std::string& name : names) {
    EXPECT_FALSE(rt.find_model(name)) << name.size();
    std::string message;
    EXPECT_EQ(thrown_kind(
                  [&] {
                    submit(rt, ids(name, {{1, 5, 2}}));
                  },
                  &message),
              ErrorKind::kNotFound);
    EXPECT_LT(message.size(), 200u);
  }
  EXPECT_FALSE(is_valid_model_name(".."));
  EXPECT_FALSE(is_valid_model_name("a/b"));
  EXPECT_TRUE(is_valid_model_name("bert-tiny_nli.v2"));
  EXPECT_EQ(world.load_count(".."), 0);
  // Empty name with several models: no default.
  EXPECT_EQ(thrown_kind([&] { submit(rt, ids("", {{1, 5, 2}})); }), ErrorKind::kNotFound);
}

TEST(Lifecycle, ModelSpecsParse) {
  auto named = parse_model_spec("nli=/models/bert");
  EXPECT_EQ(named.name, "nli");
  EXPECT_EQ(named.dir, "/models/bert");
  auto bare = parse_model_spec("models/bert-tiny/");
  EXPECT_EQ(bare.name, "bert-tiny");
  EXPECT_EQ(thrown_kind([] { parse_model_spec("a/b=dir"); }), ErrorKind::kInvalidArgument);
  EXPECT_EQ(thrown_kind([] { parse_model_spec("x="); }), ErrorKind::kInvalidArgument);
  FakeWorld world;
  RuntimeOptions o = fake_options(world);
  o.models.push_back({"nli", fixture_model("bert-tiny-nli")});
  EXPECT_EQ(thrown_kind([&] { Runtime rt(o); }), ErrorKind::kInvalidArgument);
}

TEST(Lifecycle, AdmissionAllowsExactlyTheLimitAndAClientBatchCountsOnce) {
  FakeWorld world;
  world.forward_gate.close();
  RuntimeOptions o = fake_options(world);
  o.max_concurrent_requests = 4;
  Runtime rt(o);
  ASSERT_TRUE(rt.wait_ready(5s));
  std::vector<Pending> admitted;
  admitted.push_back(submit(rt, ids("nli", {{1, 20, 2}})));
  admitted.push_back(
      submit(rt, ids("nli", std::vector<std::vector<std::int32_t>>(10, {1, 21, 2}))));
  InferenceRequest embed = ids("embed", {{1, 22, 2}});
  embed.output = OutputKind::kPooled;
  admitted.push_back(submit(rt, embed));
  // Admission is decided before tokenizing: even an invalid input takes a slot until answered.
  admitted.push_back(submit(rt, texts("rerank", {"x y"})));
  int overloaded = 0;
  for (int i = 0; i < 6; ++i) {
    std::string message;
    auto kind = thrown_kind([&] { submit(rt, ids("nli", {{1, 23, 2}})); }, &message);
    if (kind == ErrorKind::kOverloaded) ++overloaded;
  }
  EXPECT_EQ(overloaded, 6);
  EXPECT_EQ(metric(rt, "onepass_inflight_requests"), 4);
  world.forward_gate.open();
  for (auto& p : admitted) {
    EXPECT_FALSE(p.get().error);
    EXPECT_EQ(*p.calls, 1);
  }
  EXPECT_EQ(admitted[1].get().items.size(), 10u);
  ASSERT_TRUE(eventually([&] { return metric(rt, "onepass_inflight_requests") == 0; }));
  EXPECT_FALSE(submit(rt, ids("nli", {{1, 24, 2}})).get().error);
}

TEST(Lifecycle, TheSlotIsFreeBeforeTheAnswerIsHandedOver) {
  // A client may send its next request the instant it reads an answer, before the thread that
  // delivered the answer has returned; K such clients never hold more than K requests, so
  // none of them may get 429. Modelled here by submitting from inside the completion.
  FakeWorld world;
  RuntimeOptions o = fake_options(world);
  o.max_concurrent_requests = 1;
  Runtime rt(o);
  ASSERT_TRUE(rt.wait_ready(5s));
  std::promise<std::optional<ErrorKind>> next_admission;
  Pending next;
  rt.submit(ids("nli", {{1, 20, 2}}), [&](InferenceResult first) {
    EXPECT_FALSE(first.error);
    next_admission.set_value(thrown_kind([&] { next = submit(rt, ids("nli", {{1, 21, 2}})); }));
  });
  auto admission = next_admission.get_future();
  ASSERT_EQ(admission.wait_for(5s), std::future_status::ready);
  ASSERT_EQ(admission.get(), std::nullopt) << "the closed-loop client's next request got 429";
  const InferenceResult second = next.get();
  ASSERT_FALSE(second.error);
  EXPECT_FLOAT_EQ(second.items[0].values[0], fake_logits({1, 21, 2}, {0, 0, 0}, 3)[0]);
  ASSERT_TRUE(rt.wait_idle(5s));
  EXPECT_EQ(metric(rt, "onepass_inflight_requests"), 0);
}

TEST(Lifecycle, PerModelQueueCapRefusesOnlyThatModel) {
  FakeWorld world;
  world.forward_gate.close();
  RuntimeOptions o = fake_options(world);
  o.max_queued_requests_per_model = 2;
  Runtime rt(o);
  ASSERT_TRUE(rt.wait_ready(5s));
  Pending a = submit(rt, ids("nli", {{1, 20, 2}}));
  Pending b = submit(rt, ids("nli", {{1, 21, 2}}));
  EXPECT_EQ(thrown_kind([&] { submit(rt, ids("nli", {{1, 22, 2}})); }), ErrorKind::kOverloaded);
  Pending c = submit(rt, ids("rerank", {{1, 23, 2}}));
  world.forward_gate.open();
  EXPECT_FALSE(a.get().error);
  EXPECT_FALSE(b.get().error);
  EXPECT_FALSE(c.get().error);
}

TEST(Lifecycle, AFloodedModelCannotStarveAnother) {
  FakeWorld world;
  world.forward_gate.close();
  RuntimeOptions o = fake_options(world);
  o.max_batch_requests = 1;
  Runtime rt(o);
  ASSERT_TRUE(rt.wait_ready(5s));
  std::vector<Pending> flood;
  for (int i = 0; i < 30; ++i) flood.push_back(submit(rt, ids("nli", {{1, 100 + i, 2}})));
  ASSERT_TRUE(eventually([&] {
    return world.forward_gate.blocked() == 1 &&
           metric(rt, "onepass_batch_queue_depth", {{"model", "nli"}}) == 29;
  }));
  Pending other = submit(rt, ids("rerank", {{1, 7 + 50, 2}}));
  ASSERT_TRUE(eventually([&] {
    return metric(rt, "onepass_batch_queue_depth", {{"model", "rerank"}}) == 1;
  }));
  world.forward_gate.open();
  EXPECT_FALSE(other.get().error);
  for (auto& p : flood) EXPECT_FALSE(p.get().error);
  const auto log = world.batch_log();
  std::size_t position = log.size();
  for (std::size_t i = 0; i < log.size(); ++i) {
    if (log[i].model == "bert-tiny-rerank") position = std::min(position, i);
  }
  // Batch 0 held the gate; round robin serves the other model at once after it.
  EXPECT_EQ(position, 1u);
}

TEST(Lifecycle, DrainRefusesNewWorkAndCompletesWhatIsInFlight) {
  FakeWorld world;
  world.forward_gate.close();
  Runtime rt(fake_options(world));
  ASSERT_TRUE(rt.wait_ready(5s));
  EXPECT_TRUE(rt.ready());
  std::vector<Pending> in_flight;
  for (int i = 0; i < 3; ++i) in_flight.push_back(submit(rt, ids("nli", {{1, 20 + i, 2}})));
  ASSERT_TRUE(world.forward_gate.wait_blocked(1));
  rt.begin_drain();
  EXPECT_FALSE(rt.ready());
  EXPECT_EQ(thrown_kind([&] { submit(rt, ids("nli", {{1, 5, 2}})); }), ErrorKind::kUnavailable);
  EXPECT_FALSE(rt.wait_idle(20ms));
  world.forward_gate.open();
  EXPECT_TRUE(rt.wait_idle(5s));
  for (auto& p : in_flight) {
    ASSERT_TRUE(p.done(0));
    EXPECT_FALSE(p.get().error);
    EXPECT_EQ(*p.calls, 1);
  }
}

TEST(Lifecycle, DestroyingTheRuntimeAnswersQueuedRequests) {
  FakeWorld world;
  world.forward_gate.close();
  std::vector<Pending> pending;
  std::thread opener;
  {
    Runtime rt(fake_options(world));
    ASSERT_TRUE(rt.wait_ready(5s));
    for (int i = 0; i < 5; ++i) pending.push_back(submit(rt, ids("nli", {{1, 20 + i, 2}})));
    ASSERT_TRUE(world.forward_gate.wait_blocked(1));
    // Let the held batch finish while the destructor stops the threads.
    opener = std::thread([&] {
      std::this_thread::sleep_for(20ms);
      world.forward_gate.open();
    });
  }
  opener.join();
  int served = 0, refused = 0;
  for (auto& p : pending) {
    ASSERT_TRUE(p.done(0));
    EXPECT_EQ(*p.calls, 1);
    if (!p.get().error) ++served;
    if (result_error(p.get()) == ErrorKind::kUnavailable) ++refused;
  }
  EXPECT_EQ(served + refused, 5);
  EXPECT_GE(served, 1);  // the held batch completed
}

TEST(Lifecycle, DestroyingTheRuntimeAnswersRequestsWaitingForALoad) {
  FakeWorld world;
  world.load_gate.close();
  std::vector<Pending> pending;
  std::thread opener;
  {
    RuntimeOptions o = fake_options(world);
    o.lazy = true;
    Runtime rt(o);
    for (int i = 0; i < 3; ++i) pending.push_back(submit(rt, ids("nli", {{1, 20 + i, 2}})));
    ASSERT_TRUE(world.load_gate.wait_blocked(1));
    opener = std::thread([&] {
      std::this_thread::sleep_for(20ms);
      world.load_gate.open();
    });
  }
  opener.join();
  for (auto& p : pending) {
    ASSERT_TRUE(p.done(0));
    EXPECT_EQ(*p.calls, 1);
    EXPECT_EQ(result_error(p.get()), ErrorKind::kUnavailable);
  }
}

}  // namespace
}  // namespace onepass::runtime

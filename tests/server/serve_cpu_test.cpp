// How `onepass serve` uses the CPUs (issue 14), through the real binary: an idle server costs
// (next to) nothing, and each forward pass's threads run on cores of their own unless
// --pin-threads false.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/http_client.h"
#include "tests/support/paths.h"
#include "tests/support/serve_process.h"

namespace onepass::testing {
namespace {

using nlohmann::json;

// utime + stime of every thread of `pid`, in seconds (/proc/PID/stat fields 14 and 15).
double cpu_seconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // The command name (field 2) may hold spaces: count fields after its closing parenthesis.
  std::istringstream rest(stat.substr(stat.rfind(')') + 2));
  std::string field;
  long long utime = 0;
  long long stime = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i == 14) utime = std::stoll(field);
    if (i == 15) stime = std::stoll(field);
  }
  return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// The threads of `pid` that may run on exactly one CPU: that CPU and the thread's voluntary
// context switches so far (/proc/PID/task/TID/status).
struct PinnedThread {
  std::string cpu;
  long switches = 0;
};
std::vector<PinnedThread> pinned_threads(pid_t pid) {
  std::vector<PinnedThread> pinned;
  const std::filesystem::path tasks = "/proc/" + std::to_string(pid) + "/task";
  for (const auto& task : std::filesystem::directory_iterator(tasks)) {
    std::ifstream in(task.path() / "status");
    std::string line;
    std::string cpus;
    long switches = 0;
    while (std::getline(in, line)) {
      if (line.rfind("Cpus_allowed_list:", 0) == 0) {
        cpus = line.substr(line.find_first_not_of(" \t", 18));
      } else if (line.rfind("voluntary_ctxt_switches:", 0) == 0) {
        switches = std::stol(line.substr(24));
      }
    }
    if (!cpus.empty() && cpus.find_first_of(",-") == std::string::npos) {
      pinned.push_back({cpus, switches});
    }
  }
  return pinned;
}

long switches_of(const std::vector<PinnedThread>& threads) {
  long sum = 0;
  for (const auto& t : threads) sum += t.switches;
  return sum;
}

void serve_a_few(std::uint16_t port, const std::string& model = "nli") {
  const std::string body =
      json{{"inputs",
            json::array({"A man plays a guitar on a street corner.", "Someone is making music."})}}
          .dump();
  for (int i = 0; i < 8; ++i) {
    const auto r = post_json(port, "/invocations", body,
                             HttpHeaders{{{"X-Amzn-SageMaker-Target-Model", model}}});
    ASSERT_EQ(r.status, 200) << r.body;
  }
}

unsigned usable_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
  return static_cast<unsigned>(CPU_COUNT(&set));
}

TEST(ServeCpu, AnIdleServerUsesUnderOnePercentOfACore) {
  ServeProcess server({"--model", "nli=" + fixture_model("bert-tiny-nli"), "--model",
                       "emb=" + fixture_model("bert-tiny-embed")});
  ASSERT_TRUE(server.wait_ready()) << server.log();
  serve_a_few(server.port(), "nli");
  serve_a_few(server.port(), "emb");
  // Worker threads may spin briefly after their last parallel region; then nothing may run.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const double before = cpu_seconds(server.pid());
  std::this_thread::sleep_for(std::chrono::seconds(10));
  const double used = cpu_seconds(server.pid()) - before;
  EXPECT_LT(used, 0.1) << "an idle server used " << used << " s of CPU in 10 s";
}

// The variable the server's libgomp started with (/proc/PID/environ), or "" if unset.
std::string environment_of(pid_t pid, const std::string& name) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/environ");
  std::string entry;
  while (std::getline(in, entry, '\0')) {
    if (entry.rfind(name + "=", 0) == 0) return entry.substr(name.size() + 1);
  }
  return "";
}

// Sets (or with nullptr unsets) an environment variable for one scope of this test process.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value != nullptr) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(ServeCpu, WorkersSpinBrieflyAfterAForwardUnlessTheUserChose) {
  ScopedEnv no_policy("OMP_WAIT_POLICY", nullptr);
  {
    // libgomp's default spin would hold a core for milliseconds after each forward pass, in
    // the way of the I/O thread that answers: serve runs again with a short one.
    ScopedEnv unset("GOMP_SPINCOUNT", nullptr);
    ServeProcess server({"--model", "nli=" + fixture_model("bert-tiny-nli")});
    ASSERT_TRUE(server.wait_ready()) << server.log();
    serve_a_few(server.port());
    EXPECT_EQ(environment_of(server.pid(), "GOMP_SPINCOUNT"), "30000");
    EXPECT_NE(server.log().find("gomp_spincount=30000"), std::string::npos) << server.log();
  }
  {
    ScopedEnv chosen("GOMP_SPINCOUNT", "250");
    ServeProcess server({"--model", "nli=" + fixture_model("bert-tiny-nli")});
    ASSERT_TRUE(server.wait_ready()) << server.log();
    EXPECT_EQ(environment_of(server.pid(), "GOMP_SPINCOUNT"), "250");
  }
  {
    ScopedEnv unset("GOMP_SPINCOUNT", nullptr);
    ScopedEnv policy("OMP_WAIT_POLICY", "passive");
    ServeProcess server({"--model", "nli=" + fixture_model("bert-tiny-nli")});
    ASSERT_TRUE(server.wait_ready()) << server.log();
    EXPECT_EQ(environment_of(server.pid(), "GOMP_SPINCOUNT"), "");
    EXPECT_NE(server.log().find("gomp_spincount=\"libgomp default\""), std::string::npos)
        << server.log();
  }
}

TEST(ServeCpu, ForwardThreadsRunOnCoresOfTheirOwnUnlessTurnedOff) {
  if (usable_cpus() < 2) GTEST_SKIP() << "needs 2 CPUs";
  {
    ServeProcess server({"--model", "nli=" + fixture_model("bert-tiny-nli"), "--threads", "2"});
    ASSERT_TRUE(server.wait_ready()) << server.log();
    serve_a_few(server.port());
    // The compute thread and its one worker, each alone on a different CPU; nothing else.
    const auto pinned = pinned_threads(server.pid());
    ASSERT_EQ(pinned.size(), 2u) << server.log();
    EXPECT_NE(pinned[0].cpu, pinned[1].cpu);
    // Between the parallel regions of a forward pass the worker spins instead of sleeping:
    // a second live OpenMP pool (the model loader's, before loads got a thread of their own)
    // made libgomp count more threads than CPUs and sleep at every region, two context
    // switches per region, dozens per request even on this tiny model.
    const long before = switches_of(pinned_threads(server.pid()));
    serve_a_few(server.port());
    const long per_request = (switches_of(pinned_threads(server.pid())) - before) / 8;
    EXPECT_LT(per_request, 10) << "the forward threads slept between parallel regions";
  }
  {
    ServeProcess server({"--model", "nli=" + fixture_model("bert-tiny-nli"), "--threads", "2",
                         "--pin-threads", "false"});
    ASSERT_TRUE(server.wait_ready()) << server.log();
    serve_a_few(server.port());
    EXPECT_TRUE(pinned_threads(server.pid()).empty());
  }
}

}  // namespace
}  // namespace onepass::testing

// A fixture model whose loading the test holds and releases: a temporary folder of symlinks to
// the fixture's files, except config.json, which is a FIFO fed by a writer thread. Every read
// of config.json (the server reads it once when it registers the model and once when it loads
// it) blocks until the test allows one more, so requests waiting for a lazy load are provably
// in flight for as long as the test wants, without sleeping.
#pragma once

#include <atomic>
#include <string>
#include <thread>

namespace onepass::testing {

class HeldModel {
 public:
  explicit HeldModel(const std::string& fixture_dir);
  ~HeldModel();
  HeldModel(const HeldModel&) = delete;
  HeldModel& operator=(const HeldModel&) = delete;

  const std::string& dir() const { return dir_; }
  // Lets `count` more opens of config.json read the real file's bytes.
  void allow(int count) { allowed_ += count; }
  // How many reads were served so far.
  int served() const { return served_.load(); }

 private:
  void feed();

  std::string dir_;
  std::string config_;  // the real config.json's bytes
  std::atomic<int> allowed_{0};
  std::atomic<int> served_{0};
  std::atomic<bool> stop_{false};
  std::thread writer_;
};

}  // namespace onepass::testing

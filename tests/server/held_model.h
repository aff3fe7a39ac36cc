// A fixture model whose loading the test holds and releases: a temporary folder of symlinks to
// the fixture's files and a copy of its config.json, whose every open by the server waits until
// the test allows one more (held_open_shim.cpp, preloaded into the server through env()). The
// server reads config.json once when it registers the model and once when it loads it, so
// requests waiting for a lazy load are provably in flight for as long as the test wants,
// without sleeping. The server is the product binary and config.json a regular file: the hold
// is an open() that stalls, as on a slow network filesystem.
#pragma once

#include <string>
#include <vector>

namespace onepass::testing {

class HeldModel {
 public:
  explicit HeldModel(const std::string& fixture_dir);
  ~HeldModel();
  HeldModel(const HeldModel&) = delete;
  HeldModel& operator=(const HeldModel&) = delete;

  const std::string& dir() const { return dir_; }
  // The environment that holds config.json in a server: pass it to ServeProcess.
  std::vector<std::string> env() const;
  // Lets `count` more opens of config.json through.
  void allow(int count);
  // How many opens were let through so far.
  int served() const;

 private:
  std::string dir_;
  std::string gate_;  // FIFO: one byte per open let through
  std::string log_;   // one byte per open let through
  int gate_fd_ = -1;  // kept open for reading and writing, so the server's open never waits
};

}  // namespace onepass::testing

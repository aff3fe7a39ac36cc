// Starts the real `onepass serve` binary on 127.0.0.1 port 0, reads the bound port from its
// "listening on HOST:PORT" line, and stops it (SIGTERM, or SIGKILL in the destructor).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace onepass::testing {

class ServeProcess {
 public:
  // `args` follow "onepass serve"; "--port 0" and "--host 127.0.0.1" are added. `env`
  // ("NAME=VALUE") is added to the environment the server inherits, replacing a same name.
  explicit ServeProcess(const std::vector<std::string>& args,
                        const std::vector<std::string>& env = {});
  ~ServeProcess();

  std::uint16_t port() const { return port_; }
  // With "--grpc-port 0" in `args`: the gRPC port the server printed (0 without one).
  std::uint16_t grpc_port() const { return grpc_port_; }
  // http://127.0.0.1:PORT, for clients that take a URL.
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  pid_t pid() const { return pid_; }
  // Polls /ping until 200; false after `timeout_ms`.
  bool wait_ready(int timeout_ms = 60000) const;
  void signal(int sig) const;
  // Waits for the exit; the exit code, or 128 + signal; -1 after `timeout_ms`.
  int wait_exit(int timeout_ms = 35000);
  // What the server wrote to stderr so far.
  std::string log() const;

 private:
  pid_t pid_ = -1;
  std::uint16_t port_ = 0;
  std::uint16_t grpc_port_ = 0;
  std::string log_path_;
};

}  // namespace onepass::testing

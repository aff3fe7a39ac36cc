// Starts tests/hub/hub_server.py (a Hugging Face Hub and its LFS storage host on loopback) for
// the duration of a test, optionally behind TLS with a certificate the test made; reads back
// the requests it saw.
#pragma once

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "http/client.h"

namespace onepass::testing {

class HubServer {
 public:
  // `tls_cert`/`tls_key` (PEM files): both servers speak HTTPS with them.
  explicit HubServer(const std::string& tls_cert = {}, const std::string& tls_key = {})
      : tls_(!tls_cert.empty()) {
    int out[2];
    if (::pipe(out) != 0) throw std::runtime_error("pipe");
    pid_ = ::fork();
    if (pid_ == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGTERM);  // never outlive a crashed test (ctest would wait)
      ::dup2(out[1], 1);
      ::close(out[0]);
      const std::string models = std::string(ONEPASS_TEST_DATA_DIR) + "/fixtures/models";
      if (tls_)
        ::execl(ONEPASS_PYTHON, ONEPASS_PYTHON, ONEPASS_HUB_SERVER, models.c_str(), "--tls",
                tls_cert.c_str(), tls_key.c_str(), nullptr);
      else
        ::execl(ONEPASS_PYTHON, ONEPASS_PYTHON, ONEPASS_HUB_SERVER, models.c_str(), nullptr);
      ::_exit(127);
    }
    ::close(out[1]);
    std::FILE* f = ::fdopen(out[0], "r");
    const int got = std::fscanf(f, "%d %d", &port_, &cdn_port_);
    std::fclose(f);
    if (got != 2) {
      stop();
      throw std::runtime_error("hub server did not start");
    }
  }
  ~HubServer() { stop(); }
  HubServer(const HubServer&) = delete;
  HubServer& operator=(const HubServer&) = delete;

  void stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  int port() const { return port_; }
  std::string endpoint(const std::string& host = "127.0.0.1") const {
    return std::string(tls_ ? "https://" : "http://") + host + ":" + std::to_string(port_);
  }

  // Every request both servers saw: {"server": "hub"|"cdn", "method", "path", "range", "auth"}.
  nlohmann::json log() const {
    http::Url url;
    url.host = "127.0.0.1";
    url.port = static_cast<std::uint16_t>(port_);
    url.tls = tls_;
    http::Connection c(url, std::chrono::seconds(5));
    http::Request r;
    r.method = "GET";
    r.target = "/_log";
    return nlohmann::json::parse(c.send(r).body);
  }
  // Requests whose path contains `part`, on server "hub" or "cdn".
  std::vector<nlohmann::json> requests(const std::string& server, const std::string& part) const {
    std::vector<nlohmann::json> out;
    for (const auto& e : log()) {
      if (e["server"] == server && e["path"].get<std::string>().find(part) != std::string::npos)
        out.push_back(e);
    }
    return out;
  }

 private:
  bool tls_ = false;
  pid_t pid_ = -1;
  int port_ = 0;
  int cdn_port_ = 0;
};

}  // namespace onepass::testing

// The real http::Server and api::Api on a loopback port 0, in this process, over a
// FakeService: the HTTP layer and every dialect tested through real sockets without an engine.
#pragma once

#include <memory>
#include <thread>

#include "api/api.h"
#include "api/fuzz/fake_service.h"
#include "http/server.h"

namespace onepass::testing {

using api::fuzzing::FakeService;

class InProcessServer {
 public:
  explicit InProcessServer(api::ApiOptions api_options = {}, http::ServerOptions options = {})
      : service_(std::make_unique<FakeService>()) {
    api_ = std::make_unique<api::Api>(*service_, std::move(api_options));
    options.host = "127.0.0.1";
    options.port = 0;
    server_ = std::make_unique<http::Server>(
        options,
        [this](http::Request request, http::Respond respond) {
          api_->handle(std::move(request), std::move(respond));
        },
        [this](int status, std::string_view target, std::string_view message) {
          return api_->transport_error(status, target, message);
        });
    server_->listen();
    thread_ = std::thread([this] {
      server_->run(false, [this] {
        service_->begin_drain();
        api_->begin_drain();
      });
    });
  }
  ~InProcessServer() {
    server_->stop();
    if (thread_.joinable()) thread_.join();
    // Late completions post into the stopped (still alive) io_context, then die with it.
    service_.reset();
    server_.reset();
  }

  std::uint16_t port() const { return server_->port(); }
  FakeService& service() { return *service_; }
  http::Server& server() { return *server_; }
  // Waits until run() returned (after a drain).
  void join() {
    if (thread_.joinable()) thread_.join();
  }

 private:
  std::unique_ptr<FakeService> service_;
  std::unique_ptr<api::Api> api_;
  std::unique_ptr<http::Server> server_;
  std::thread thread_;
};

}  // namespace onepass::testing

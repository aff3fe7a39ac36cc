#include "tests/trace/otlp_receiver.h"

#include <condition_variable>
#include <mutex>
#include <thread>

#include "http/server.h"

namespace onepass::testing {

struct OtlpReceiver::State {
  mutable std::mutex mutex;
  mutable std::condition_variable arrived;
  std::vector<ReceivedExport> exports;
  int status = 200;
  std::chrono::milliseconds delay{0};
  int times = -1;
  int retry_after = -1;
  std::unique_ptr<http::Server> server;
  std::thread thread;
  std::vector<std::thread> delayed;  // slow answers, woken early when the receiver closes
  bool closing = false;
};

OtlpReceiver::OtlpReceiver() : state_(std::make_shared<State>()) {
  http::ServerOptions options;
  options.host = "127.0.0.1";
  options.port = 0;
  options.io_threads = 2;
  State* state = state_.get();
  state_->server = std::make_unique<http::Server>(
      options,
      [state](http::Request request, http::Respond respond) {
        ReceivedExport received;
        received.path = std::string(request.path());
        if (const std::string* type = request.header("content-type")) received.content_type = *type;
        for (const auto& header : request.headers)
          received.headers.emplace_back(header.name, header.value);
        received.body = std::move(request.body);
        http::Response response;
        std::chrono::milliseconds delay{0};
        {
          std::lock_guard lock(state->mutex);
          state->exports.push_back(std::move(received));
          const bool scripted = state->times != 0;
          response.status = scripted ? state->status : 200;
          delay = scripted ? state->delay : std::chrono::milliseconds(0);
          if (scripted && state->retry_after >= 0)
            response.headers.push_back({"Retry-After", std::to_string(state->retry_after)});
          if (state->times > 0) --state->times;
          state->arrived.notify_all();
        }
        response.content_type = "application/x-protobuf";
        if (delay.count() == 0) {
          respond(std::move(response));
          return;
        }
        // A slow collector: answer later, off the I/O thread.
        std::lock_guard lock(state->mutex);
        state->delayed.emplace_back(
            [state, respond = std::move(respond), response = std::move(response), delay] {
              std::unique_lock wait_lock(state->mutex);
              if (state->arrived.wait_for(wait_lock, delay, [&] { return state->closing; })) return;
              wait_lock.unlock();
              respond(response);
            });
      },
      [](int status, std::string_view, std::string_view message) {
        http::Response response;
        response.status = status;
        response.body = std::string(message);
        return response;
      });
  state_->server->listen();
  state_->thread = std::thread([state] { state->server->run(false); });
}

OtlpReceiver::~OtlpReceiver() {
  std::vector<std::thread> delayed;
  {
    std::lock_guard lock(state_->mutex);
    state_->closing = true;
    delayed.swap(state_->delayed);
    state_->arrived.notify_all();
  }
  for (auto& thread : delayed) thread.join();
  state_->server->stop();
  if (state_->thread.joinable()) state_->thread.join();
  // Answers delayed by requests that came in meanwhile return at once (closing).
  for (auto& thread : state_->delayed) thread.join();
}

std::uint16_t OtlpReceiver::port() const { return state_->server->port(); }

void OtlpReceiver::answer(int status, std::chrono::milliseconds delay, int times,
                          int retry_after_seconds) {
  std::lock_guard lock(state_->mutex);
  state_->status = status;
  state_->delay = delay;
  state_->times = times;
  state_->retry_after = retry_after_seconds;
}

std::vector<ReceivedExport> OtlpReceiver::exports() const {
  std::lock_guard lock(state_->mutex);
  return state_->exports;
}

std::size_t OtlpReceiver::count() const {
  std::lock_guard lock(state_->mutex);
  return state_->exports.size();
}

bool OtlpReceiver::wait_for(std::size_t n, std::chrono::milliseconds timeout) const {
  std::unique_lock lock(state_->mutex);
  return state_->arrived.wait_for(lock, timeout, [&] { return state_->exports.size() >= n; });
}

}  // namespace onepass::testing

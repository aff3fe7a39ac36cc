// Test doubles for the bench: a tiny HTTP/1.1 server on 127.0.0.1, port 0 (thread per
// connection, keep-alive, Content-Length bodies only), and handlers that answer like onepass in
// every dialect the bench speaks, computed from the input text so that each input has its own
// answer. SwapPairs wraps a handler into a deliberately wrong server.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "bench/dataset.h"

namespace onepass::bench::testing {

struct FakeRequest {
  std::string method, target, body;
  std::map<std::string, std::string> headers;  // names lower-cased
};

struct FakeResponse {
  int status = 200;
  std::string body;
};

using Handler = std::function<FakeResponse(const FakeRequest&)>;

class FakeServer {
 public:
  explicit FakeServer(Handler handler);
  ~FakeServer();
  FakeServer(const FakeServer&) = delete;
  FakeServer& operator=(const FakeServer&) = delete;

  std::uint16_t port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::size_t requests() const { return requests_.load(); }

 private:
  void accept_loop();
  void serve(int fd);

  Handler handler_;
  int listen_fd_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<std::size_t> requests_{0};
  std::mutex mutex_;
  std::vector<int> connections_;
  std::vector<std::thread> threads_;
  std::thread acceptor_;
};

// The fake model: three NLI logits (labels contradiction, entailment, neutral) or an 8-float
// embedding, derived from a hash of the text (and pair).
std::vector<float> fake_logits(const std::string& text, const std::string& pair);
std::vector<float> fake_embedding(const std::string& text);
extern const char* const kFakeLabels[3];
// The label the fake model gives a sample (arg-max of fake_logits).
std::string fake_label(const Sample& sample);

// Answers /invocations, /predict, /embed, /v2/models/{m}/infer (text and input_ids forms),
// /classify and /v1/embeddings as onepass's dialects do. `embedder` switches the model's task.
// Shape errors in a request answer 422 with the reason, so a test sees what the bench sent.
FakeResponse answer_like_onepass(const FakeRequest& request, bool embedder);

// A deliberately wrong server: a request that overlaps another in time gets the other's answer
// (as a batcher that scatters results to the wrong requests would). Sequential requests, like
// the bench's reference pass, are answered correctly.
class SwapPairs {
 public:
  explicit SwapPairs(Handler inner) : inner_(std::move(inner)) {}
  FakeResponse operator()(const FakeRequest& request);
  std::size_t swapped() const { return swapped_.load(); }

 private:
  struct Waiter {
    FakeResponse mine, theirs;
    bool paired = false;
  };
  Handler inner_;
  std::mutex mutex_;
  std::condition_variable cv_;
  Waiter* waiting_ = nullptr;
  std::atomic<std::size_t> swapped_{0};
};

}  // namespace onepass::bench::testing

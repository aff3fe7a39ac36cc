// Fake Encoder and Tokenizer for runtime tests: deterministic outputs computable by hand, a gate
// that holds forward passes (and loads) so tests can build exact queue states, and a log of the
// batches that ran.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "model/encoder.h"
#include "runtime/runtime.h"
#include "tokenizer/tokenizer.h"

namespace onepass::runtime::testing {

// A gate closed by default; threads calling pass() block until open() (or count the waiters).
class Gate {
 public:
  explicit Gate(bool open = true) : open_(open) {}
  void open();
  void close();
  void pass();
  // Waits until `n` threads are blocked in pass() (or the timeout); true when reached.
  bool wait_blocked(int n, int timeout_ms = 5000);
  int blocked() const;

 private:
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  bool open_;
  int blocked_ = 0;
};

// Token ids with special meaning to the fake encoder.
constexpr std::int32_t kCls = 1;
constexpr std::int32_t kSep = 2;
constexpr std::int32_t kNanId = 7;    // its sequence's outputs are NaN
constexpr std::int32_t kThrowId = 8;  // forward() refuses any batch holding it

struct BatchRecord {
  std::string model;
  std::vector<std::size_t> lengths;     // tokens per sequence, in batch order
  std::vector<std::int32_t> first_ids;  // input_ids[1] (the first real token) per sequence
};

// Shared by every fake model a test builds.
struct FakeWorld {
  Gate forward_gate{true};
  Gate load_gate{true};
  std::mutex mutex;
  std::vector<BatchRecord> batches;
  std::map<std::string, int> loads;  // folder name -> encoder loads
  std::atomic<int> forwards{0};

  ModelLoaders loaders();
  std::vector<BatchRecord> batch_log();
  int load_count(const std::string& folder);
};

// Classifier logits of the fake: logit[l] = (l + 1) * sum(ids) / 1000 + n_tokens * 0.01 + tt
// where tt is the sum of token type ids. Embedder hidden state of token t with id x:
// row[h] = x * 0.5 + t * 0.25 + h.
std::vector<float> fake_logits(const std::vector<std::int32_t>& ids,
                               const std::vector<std::int32_t>& type_ids, int num_labels);
float fake_hidden(std::int32_t id, std::size_t position, std::size_t h);

// Whitespace tokenizer of the fake: a word of digits is that id, any other word is
// 100 + its length. [CLS]=1 A [SEP]=2 (B [SEP]=2), type ids 0 then 1.
std::vector<std::int32_t> fake_tokenize(const std::string& text);

// A fixture model folder (tests/data/fixtures/models/<name>).
std::filesystem::path fixture_model(const std::string& name);

}  // namespace onepass::runtime::testing

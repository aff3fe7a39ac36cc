#include "fake_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace onepass::bench::testing {

using nlohmann::json;

FakeServer::FakeServer(Handler handler) : handler_(std::move(handler)) {
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::listen(listen_fd_, 256) != 0) {
    throw std::runtime_error("fake server cannot listen");
  }
  socklen_t len = sizeof(addr);
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  acceptor_ = std::thread([this] { accept_loop(); });
}

FakeServer::~FakeServer() {
  stopping_ = true;
  ::shutdown(listen_fd_, SHUT_RDWR);
  acceptor_.join();
  ::close(listen_fd_);
  {
    std::lock_guard lock(mutex_);
    for (int fd : connections_) ::shutdown(fd, SHUT_RDWR);
  }
  for (auto& t : threads_) t.join();
}

void FakeServer::accept_loop() {
  while (!stopping_) {
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      if (stopping_) return;
      continue;
    }
    std::lock_guard lock(mutex_);
    connections_.push_back(fd);
    threads_.emplace_back([this, fd] { serve(fd); });
  }
}

void FakeServer::serve(int fd) {
  std::string buffer;
  char chunk[8192];
  auto fill = [&] {
    const ssize_t n = ::recv(fd, chunk, sizeof(chunk), 0);
    if (n <= 0) return false;
    buffer.append(chunk, static_cast<std::size_t>(n));
    return true;
  };
  for (;;) {
    std::size_t end;
    while ((end = buffer.find("\r\n\r\n")) == std::string::npos) {
      if (!fill()) {
        ::close(fd);
        return;
      }
    }
    FakeRequest request;
    const std::string head = buffer.substr(0, end);
    buffer.erase(0, end + 4);
    std::size_t line_end = head.find("\r\n");
    const std::string first = head.substr(0, line_end);
    const std::size_t sp1 = first.find(' '), sp2 = first.rfind(' ');
    request.method = first.substr(0, sp1);
    request.target = first.substr(sp1 + 1, sp2 - sp1 - 1);
    std::size_t pos = line_end == std::string::npos ? head.size() : line_end + 2;
    while (pos < head.size()) {
      std::size_t eol = head.find("\r\n", pos);
      if (eol == std::string::npos) eol = head.size();
      const std::string line = head.substr(pos, eol - pos);
      const std::size_t colon = line.find(':');
      std::string key = line.substr(0, colon);
      std::transform(key.begin(), key.end(), key.begin(),
                     [](unsigned char c) { return std::tolower(c); });
      std::size_t v = colon + 1;
      while (v < line.size() && line[v] == ' ') ++v;
      request.headers[key] = line.substr(v);
      pos = eol + 2;
    }
    const std::size_t length = std::strtoul(request.headers["content-length"].c_str(), nullptr, 10);
    while (buffer.size() < length) {
      if (!fill()) {
        ::close(fd);
        return;
      }
    }
    request.body = buffer.substr(0, length);
    buffer.erase(0, length);
    ++requests_;
    const FakeResponse response = handler_(request);
    const std::string out = "HTTP/1.1 " + std::to_string(response.status) +
                            " X\r\nContent-Type: application/json\r\nContent-Length: " +
                            std::to_string(response.body.size()) + "\r\n\r\n" + response.body;
    if (::send(fd, out.data(), out.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(out.size())) {
      ::close(fd);
      return;
    }
  }
}

const char* const kFakeLabels[3] = {"contradiction", "entailment", "neutral"};

namespace {

std::uint64_t fnv1a(const std::string& s, std::uint64_t h = 1469598103934665603ull) {
  for (const unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

float unit(std::uint64_t h, int k) {
  h ^= static_cast<std::uint64_t>(k + 1) * 0x9E3779B97F4A7C15ull;
  h ^= h >> 31;
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 29;
  return static_cast<float>(h % 20001) / 10000.0f - 1.0f;  // [-1, 1]
}

std::vector<float> softmax(const std::vector<float>& logits) {
  const float top = *std::max_element(logits.begin(), logits.end());
  std::vector<float> p(logits.size());
  float sum = 0;
  for (std::size_t i = 0; i < p.size(); ++i) sum += p[i] = std::exp(logits[i] - top);
  for (float& v : p) v /= sum;
  return p;
}

FakeResponse unprocessable(const std::string& why) { return {422, json{{"error", why}}.dump()}; }

json label_scores(const std::vector<float>& logits) {
  const auto probs = softmax(logits);
  json list = json::array();
  std::vector<std::size_t> order{0, 1, 2};
  std::sort(order.begin(), order.end(), [&](auto a, auto b) { return probs[a] > probs[b]; });
  for (std::size_t i : order) list.push_back({{"label", kFakeLabels[i]}, {"score", probs[i]}});
  return list;
}

}  // namespace

std::vector<float> fake_logits(const std::string& text, const std::string& pair) {
  const std::uint64_t h = fnv1a(pair, fnv1a(text) ^ 0x5555);
  return {3 * unit(h, 0), 3 * unit(h, 1), 3 * unit(h, 2)};
}

std::vector<float> fake_embedding(const std::string& text) {
  const std::uint64_t h = fnv1a(text);
  std::vector<float> v(8);
  for (int k = 0; k < 8; ++k) v[k] = unit(h, k);
  return v;
}

std::string fake_label(const Sample& sample) {
  const auto logits = fake_logits(sample.text, sample.text_pair.value_or(""));
  return kFakeLabels[std::max_element(logits.begin(), logits.end()) - logits.begin()];
}

FakeResponse answer_like_onepass(const FakeRequest& request, bool embedder) {
  if (request.method != "POST") return {405, "{}"};
  if (request.headers.count("content-type") == 0 ||
      request.headers.at("content-type") != "application/json") {
    return {415, "{}"};
  }
  const json body = json::parse(request.body, nullptr, false);
  if (body.is_discarded()) return {400, "{}"};
  const std::string& t = request.target;
  if (t == "/invocations") {
    if (!body.contains("inputs") || !body["inputs"].is_array()) return unprocessable("inputs list");
    json out = json::array();
    for (const auto& item : body["inputs"]) {
      std::string text, pair;
      if (item.is_string()) {
        text = item.get<std::string>();
      } else if (item.is_object() && item.contains("text")) {
        text = item["text"].get<std::string>();
        pair = item.value("text_pair", "");
      } else {
        return unprocessable("inputs item");
      }
      if (embedder) {
        out.push_back(json::array({fake_embedding(text)}));  // one "token"
      } else {
        out.push_back(label_scores(fake_logits(text, pair)).front());
      }
    }
    return {200, out.dump()};
  }
  if (t == "/predict" || t == "/embed") {
    if ((t == "/embed") != embedder) return unprocessable("wrong task");
    if (!body.contains("inputs") || !body["inputs"].is_array()) return unprocessable("inputs");
    json out = json::array();
    for (const auto& item : body["inputs"]) {
      if (t == "/embed") {
        if (!item.is_string()) return unprocessable("embed input");
        out.push_back(fake_embedding(item.get<std::string>()));
        continue;
      }
      if (!item.is_array() || item.empty() || item.size() > 2) return unprocessable("predict item");
      out.push_back(
          label_scores(fake_logits(item[0], item.size() == 2 ? item[1].get<std::string>() : "")));
    }
    return {200, out.dump()};
  }
  if (t.rfind("/v2/models/", 0) == 0 && t.size() > 6 && t.substr(t.size() - 6) == "/infer") {
    std::map<std::string, json> inputs;
    for (const auto& input : body["inputs"]) inputs[input.value("name", "")] = input;
    std::size_t n = 0;
    std::vector<std::pair<std::string, std::string>> texts;
    if (inputs.count("text")) {
      n = inputs["text"]["data"].size();
      for (std::size_t i = 0; i < n; ++i) {
        texts.emplace_back(
            inputs["text"]["data"][i],
            inputs.count("text_pair") ? inputs["text_pair"]["data"][i].get<std::string>() : "");
      }
    } else if (inputs.count("input_ids")) {
      // The tensor form: hash the unpadded ids, as a model that drops padding would see them.
      const auto& shape = inputs["input_ids"]["shape"];
      n = shape[0];
      const std::size_t seq = shape[1];
      for (std::size_t i = 0; i < n; ++i) {
        std::string key;
        for (std::size_t s = 0; s < seq; ++s) {
          if (inputs["attention_mask"]["data"][i * seq + s] == 1) {
            key += std::to_string(inputs["input_ids"]["data"][i * seq + s].get<long>()) + " ";
          }
        }
        texts.emplace_back(key, "");
      }
    } else {
      return {400, json{{"error", "no text or input_ids"}}.dump()};
    }
    json data = json::array();
    for (const auto& [text, pair] : texts) {
      for (float v : embedder ? fake_embedding(text) : fake_logits(text, pair)) data.push_back(v);
    }
    const std::size_t width = embedder ? 8 : 3;
    json output = {{"name", embedder ? "embeddings" : "logits"},
                   {"datatype", "FP32"},
                   {"shape", {n, width}},
                   {"data", data}};
    return {200, json{{"model_name", "fake"}, {"outputs", json::array({output})}}.dump()};
  }
  if (t == "/v1/embeddings" || t == "/classify") {
    if ((t == "/v1/embeddings") != embedder) return unprocessable("wrong task");
    json data = json::array();
    std::size_t index = 0;
    for (const auto& item : body["input"]) {
      const std::string text = item.get<std::string>();
      if (embedder) {
        data.push_back(
            {{"object", "embedding"}, {"index", index}, {"embedding", fake_embedding(text)}});
      } else {
        // vLLM's classify has one string: the pair arrives joined by a newline.
        const std::size_t nl = text.find('\n');
        const auto logits = nl == std::string::npos
                                ? fake_logits(text, "")
                                : fake_logits(text.substr(0, nl), text.substr(nl + 1));
        const auto probs = softmax(logits);
        const std::size_t best = std::max_element(probs.begin(), probs.end()) - probs.begin();
        data.push_back({{"index", index}, {"label", kFakeLabels[best]}, {"probs", probs}});
      }
      ++index;
    }
    std::reverse(data.begin(), data.end());  // OpenAI clients must order by "index"
    return {200, json{{"object", "list"}, {"data", data}}.dump()};
  }
  return {404, "{}"};
}

FakeResponse SwapPairs::operator()(const FakeRequest& request) {
  Waiter me;
  me.mine = inner_(request);
  std::unique_lock lock(mutex_);
  if (waiting_ != nullptr) {
    Waiter* other = waiting_;
    waiting_ = nullptr;
    other->theirs = me.mine;
    other->paired = true;
    swapped_ += 2;
    cv_.notify_all();
    return other->mine;
  }
  waiting_ = &me;
  cv_.wait_for(lock, std::chrono::milliseconds(30), [&] { return me.paired; });
  if (!me.paired) {
    waiting_ = nullptr;
    return me.mine;
  }
  return me.theirs;
}

}  // namespace onepass::bench::testing

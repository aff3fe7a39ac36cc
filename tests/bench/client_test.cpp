// The HTTP client against the loopback test server: keep-alive reuse, status codes, timeouts,
// refused connections, URL parsing.
#include "http/client.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <future>
#include <thread>

#include "fake_server.h"

namespace onepass::bench::testing {
namespace {

using namespace std::chrono_literals;

TEST(Url, ParsesHostPortAndPrefix) {
  const auto u = http::Url::parse("http://127.0.0.1:8080/prefix/");
  EXPECT_EQ(u.host, "127.0.0.1");
  EXPECT_EQ(u.port, 8080);
  EXPECT_EQ(u.prefix, "/prefix");
  EXPECT_EQ(http::Url::parse("http://localhost").port, 80);
  EXPECT_EQ(http::Url::parse("http://h:1").to_string(), "http://h:1");
  const auto tls = http::Url::parse("https://h");
  EXPECT_TRUE(tls.tls);
  EXPECT_EQ(tls.port, 443);
  EXPECT_EQ(tls.to_string(), "https://h:443");
  EXPECT_FALSE(u.tls);
  EXPECT_THROW(http::Url::parse("ftp://h"), Error);
  EXPECT_THROW(http::Url::parse("http://h:99999"), Error);
  EXPECT_THROW(http::Url::parse("http://:80"), Error);
}

TEST(Client, KeepAliveReusesOneConnection) {
  std::atomic<int> calls{0};
  FakeServer server([&](const FakeRequest& r) {
    ++calls;
    return FakeResponse{r.target == "/base/missing" ? 404
                        : r.target == "/base/x"     ? 200
                                                    : 400,
                        "{\"echo\":" + std::to_string(r.body.size()) + "}"};
  });
  http::Connection c(http::Url::parse(server.url() + "/base"), 5000ms);
  for (int i = 0; i < 20; ++i) {
    const http::Request req{"POST", "/x", {}, std::string(static_cast<std::size_t>(i) * 1000, 'a')};
    const auto res = c.send(req);
    ASSERT_EQ(res.status, 200);
    EXPECT_EQ(res.body, "{\"echo\":" + std::to_string(i * 1000) + "}");
    EXPECT_EQ(res.header("content-type"), "application/json");
  }
  http::Request missing;
  missing.target = "/missing";
  EXPECT_EQ(c.send(missing).status, 404);
  EXPECT_EQ(calls.load(), 21);
}

TEST(Client, TimeoutAndRefusedAreTransportFailures) {
  // The server answers only after the client has given up, whatever the machine's load.
  std::promise<void> gave_up;
  std::shared_future<void> released = gave_up.get_future().share();
  FakeServer slow([released](const FakeRequest&) {
    released.wait();
    return FakeResponse{200, "{}"};
  });
  http::Connection c(http::Url::parse(slow.url()), 50ms);
  try {
    c.send({});
    ADD_FAILURE() << "no timeout";
  } catch (const http::TransportError& e) {
    EXPECT_EQ(e.failure(), http::TransportFailure::kTimeout);
  }
  gave_up.set_value();
  // A port with nothing listening: bind one, read its number, close it.
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  socklen_t len = sizeof(addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  http::Connection refused(
      http::Url::parse("http://127.0.0.1:" + std::to_string(ntohs(addr.sin_port))), 1000ms);
  try {
    refused.send({});
    FAIL() << "connected to a closed port";
  } catch (const http::TransportError& e) {
    EXPECT_EQ(e.failure(), http::TransportFailure::kConnect);
  }
}

TEST(Client, AConnectionClosedByTheServerIsRetriedOnceAndCounted) {
  // A bare server that answers one request per connection and then closes it without saying
  // so (no Connection: close), as a server resetting busy keep-alive connections would.
  const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(::listen(listener, 8), 0);
  socklen_t len = sizeof(addr);
  ::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len);
  std::atomic<int> closed{0};  // connections the server has closed
  std::thread server([listener, &closed] {
    for (int i = 0; i < 3; ++i) {
      const int fd = ::accept(listener, nullptr, nullptr);
      if (fd < 0) return;
      std::string request;
      char chunk[4096];
      while (request.find("\r\n\r\n") == std::string::npos) {
        const ssize_t n = ::recv(fd, chunk, sizeof(chunk), 0);
        if (n <= 0) break;
        request.append(chunk, static_cast<std::size_t>(n));
      }
      const std::string answer = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
      ::send(fd, answer.data(), answer.size(), MSG_NOSIGNAL);
      ::close(fd);
      ++closed;
    }
  });
  http::Connection c(http::Url::parse("http://127.0.0.1:" + std::to_string(ntohs(addr.sin_port))),
                     5000ms);
  EXPECT_EQ(c.send({"GET", "/", {}, ""}).body, "ok");
  EXPECT_EQ(c.retries(), 0u);
  // Once the server has closed it, the next send finds a dead connection and must resend.
  const auto wait_closed = [&closed](int n) {
    const auto deadline = std::chrono::steady_clock::now() + 5s;
    while (closed.load() < n && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(1ms);
    return closed.load() >= n;
  };
  ASSERT_TRUE(wait_closed(1));
  EXPECT_EQ(c.send({"GET", "/", {}, ""}).body, "ok");
  EXPECT_EQ(c.retries(), 1u);
  ASSERT_TRUE(wait_closed(2));
  EXPECT_EQ(c.send({"GET", "/", {}, ""}).body, "ok");
  EXPECT_EQ(c.retries(), 2u);
  server.join();
  ::close(listener);
}

TEST(Client, ManyConnectionsInParallel) {
  FakeServer server([](const FakeRequest& r) { return FakeResponse{200, r.body}; });
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int t = 0; t < 64; ++t) {
    threads.emplace_back([&, t] {
      http::Connection c(http::Url::parse(server.url()), 10000ms);
      for (int i = 0; i < 10; ++i) {
        http::Request req;
        req.body = std::to_string(t * 100 + i);
        if (c.send(req).body == req.body) ++ok;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(ok.load(), 640);
}

}  // namespace
}  // namespace onepass::bench::testing

#include "tests/support/http_client.h"

#include <poll.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cctype>
#include <chrono>

namespace onepass::testing {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;

struct HttpConnection::Impl {
  asio::io_context ioc;
  beast::tcp_stream stream{ioc};
  beast::flat_buffer buffer;
};

HttpConnection::HttpConnection(std::uint16_t port) : impl_(new Impl) {
  impl_->stream.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
}

HttpConnection::~HttpConnection() {
  boost::system::error_code ec;
  impl_->stream.socket().shutdown(tcp::socket::shutdown_both, ec);
  delete impl_;
}

HttpResult HttpConnection::request(const std::string& method, const std::string& target,
                                   const std::string& body, const std::string& content_type,
                                   const HttpHeaders& headers) {
  bhttp::request<bhttp::string_body> req{bhttp::string_to_verb(method), target, 11};
  if (req.method() == bhttp::verb::unknown) req.method_string(method);
  req.set(bhttp::field::host, "127.0.0.1");
  if (!content_type.empty()) req.set(bhttp::field::content_type, content_type);
  for (const auto& [name, value] : headers.fields) req.set(name, value);
  req.body() = body;
  req.prepare_payload();
  impl_->stream.expires_after(std::chrono::seconds(60));
  bhttp::write(impl_->stream, req);
  bhttp::response_parser<bhttp::string_body> parser;
  parser.body_limit(1 << 30);
  bhttp::read(impl_->stream, impl_->buffer, parser);
  auto res = parser.release();
  HttpResult result;
  result.status = static_cast<int>(res.result_int());
  for (const auto& field : res) {
    std::string name(field.name_string());
    for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    result.headers[name] = std::string(field.value());
  }
  result.body = std::move(res.body());
  result.closed = !res.keep_alive();
  return result;
}

HttpResult http_request(std::uint16_t port, const std::string& method, const std::string& target,
                        const std::string& body, const std::string& content_type,
                        const HttpHeaders& headers) {
  HttpConnection connection(port);
  return connection.request(method, target, body, content_type, headers);
}

std::string raw_exchange(std::uint16_t port, const std::string& raw, int timeout_ms) {
  asio::io_context ioc;
  tcp::socket socket(ioc);
  socket.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
  boost::system::error_code ec;
  asio::write(socket, asio::buffer(raw), ec);
  std::string out;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  char buf[4096];
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          deadline - std::chrono::steady_clock::now())
                          .count();
    if (left <= 0) break;
    pollfd pfd{socket.native_handle(), POLLIN, 0};
    if (::poll(&pfd, 1, static_cast<int>(left)) <= 0) break;
    const auto n = socket.read_some(asio::buffer(buf), ec);
    if (ec || n == 0) break;
    out.append(buf, n);
  }
  return out;
}

int raw_status(const std::string& response) {
  if (response.size() < 12 || response.compare(0, 5, "HTTP/") != 0) return 0;
  return std::atoi(response.substr(9, 3).c_str());
}

}  // namespace onepass::testing

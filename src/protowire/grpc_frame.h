// gRPC's length-prefixed message (the gRPC HTTP/2 protocol), as the gRPC server and the bench's
// gRPC client both frame and cut their messages: a compressed-flag byte, the message's length as
// 4 bytes big-endian, then the message.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace onepass::protowire {

inline constexpr std::size_t kGrpcPrefixBytes = 5;

// `message` framed uncompressed, in one string: one HTTP/2 DATA frame carries it whole.
inline std::string grpc_framed(std::string_view message) {
  const auto length = static_cast<std::uint32_t>(message.size());
  std::string framed;
  framed.reserve(kGrpcPrefixBytes + message.size());
  framed.push_back(0);
  for (int shift = 24; shift >= 0; shift -= 8) framed.push_back(static_cast<char>(length >> shift));
  framed.append(message);
  return framed;
}

// The length a prefix at `prefix` (kGrpcPrefixBytes long) announces.
inline std::uint32_t grpc_frame_length(const char* prefix) {
  const auto* u = reinterpret_cast<const unsigned char*>(prefix + 1);
  return (std::uint32_t{u[0]} << 24) | (std::uint32_t{u[1]} << 16) | (std::uint32_t{u[2]} << 8) |
         u[3];
}

}  // namespace onepass::protowire

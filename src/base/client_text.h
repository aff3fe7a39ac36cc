// Client text inside the server's own messages. An error body or a log line may name what a
// client sent (an unknown prompt name, a KServe input name, a method), but only as a short,
// escaped prefix: a 100 KB field must not come back as a 100 KB error body or log line
// (docs/reliability.md "Bad input": an error body stays under 1 KiB). Every message built from
// request text quotes it through quote_client_text(); bounded_message() is the backstop that
// api::ApiError applies to every message, whoever built it.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace onepass {

// How much of a client's text a message quotes, and how long a whole message may be.
inline constexpr std::size_t kQuotedClientTextBytes = 64;
inline constexpr std::size_t kMaxMessageBytes = 512;

// `text` in single quotes, at most its first `max_bytes` bytes: printable ASCII as it is, and
// every other byte (control, non-ASCII, the single quote and the backslash) as \xNN, so the result
// is plain ASCII whatever the client sent. A cut text is followed by "..." and its full size:
// 'abc', 'aaaa...' (100000 bytes).
std::string quote_client_text(std::string_view text,
                              std::size_t max_bytes = kQuotedClientTextBytes);

// `message` unchanged when it holds at most `max_bytes` bytes, else cut at a UTF-8 boundary to
// fit with a trailing "...".
std::string bounded_message(std::string message, std::size_t max_bytes = kMaxMessageBytes);

}  // namespace onepass

// HPACK (RFC 7541), the header compression of HTTP/2, as onepass's HTTP/2 server needs it: a full
// decoder for the header blocks clients send (static and dynamic tables, Huffman strings, table
// size updates), and an encoder for responses that never indexes anything, so that the server
// keeps no encoder state and never has to send a table size update.
#pragma once

#include <cstddef>
#include <deque>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace onepass::http2 {

struct Header {
  std::string name;
  std::string value;
};

// Thrown for a malformed header block: a COMPRESSION_ERROR for the connection (RFC 9113 4.3).
class HpackError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One connection's decoding context: the dynamic table outlives a block, so a connection decodes
// every header block it receives, in order, with one HpackDecoder.
class HpackDecoder {
 public:
  // `max_table_size`: the SETTINGS_HEADER_TABLE_SIZE this side advertised (4096 by default): a
  // dynamic table size update above it is an error.
  explicit HpackDecoder(std::size_t max_table_size = 4096);

  // Decodes one whole header block (HEADERS + CONTINUATION payloads joined), appending the
  // headers in order to `out`. Throws HpackError when the block is malformed, or as soon as the
  // decoded list's size (RFC 9113 6.5.2: name + value + 32 per header) passes `max_list_bytes`;
  // after a throw the dynamic table is out of step with the peer's, so the connection must end.
  void decode(std::string_view block, std::vector<Header>& out, std::size_t max_list_bytes);

  // The dynamic table's size as RFC 7541 4.1 counts it (name + value + 32 per entry).
  std::size_t dynamic_table_size() const { return table_bytes_; }

 private:
  struct FieldView {
    std::string_view name;
    std::string_view value;
  };
  FieldView field_at(std::size_t index) const;
  void insert(Header header);
  void evict_to(std::size_t limit);

  std::size_t max_table_size_;  // what a size update may set
  std::size_t capacity_;        // the size the peer's encoder last set
  std::deque<Header> table_;    // newest first: table_[0] is index 62
  std::size_t table_bytes_ = 0;
};

// Encodes headers as literals "without indexing" (RFC 7541 6.2.2), the name by its static
// table index when the static table has it, values as raw (non-Huffman) strings, except
// ":status: 200" which is static index 8 (indexed). Never touches a dynamic table, so it needs
// no state and no table size updates.
void encode_header(std::string_view name, std::string_view value, std::string& out);

}  // namespace onepass::http2

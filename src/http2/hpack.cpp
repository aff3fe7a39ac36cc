#include "http2/hpack.h"

#include <array>
#include <cstdint>

#include "http2/huffman.h"

namespace onepass::http2 {
namespace {

struct StaticEntry {
  std::string_view name;
  std::string_view value;
};

// RFC 7541 Appendix A: index 1 is kStaticTable[0].
constexpr std::array<StaticEntry, 61> kStaticTable = {{
    {":authority", ""},
    {":method", "GET"},
    {":method", "POST"},
    {":path", "/"},
    {":path", "/index.html"},
    {":scheme", "http"},
    {":scheme", "https"},
    {":status", "200"},
    {":status", "204"},
    {":status", "206"},
    {":status", "304"},
    {":status", "400"},
    {":status", "404"},
    {":status", "500"},
    {"accept-charset", ""},
    {"accept-encoding", "gzip, deflate"},
    {"accept-language", ""},
    {"accept-ranges", ""},
    {"accept", ""},
    {"access-control-allow-origin", ""},
    {"age", ""},
    {"allow", ""},
    {"authorization", ""},
    {"cache-control", ""},
    {"content-disposition", ""},
    {"content-encoding", ""},
    {"content-language", ""},
    {"content-length", ""},
    {"content-location", ""},
    {"content-range", ""},
    {"content-type", ""},
    {"cookie", ""},
    {"date", ""},
    {"etag", ""},
    {"expect", ""},
    {"expires", ""},
    {"from", ""},
    {"host", ""},
    {"if-match", ""},
    {"if-modified-since", ""},
    {"if-none-match", ""},
    {"if-range", ""},
    {"if-unmodified-since", ""},
    {"last-modified", ""},
    {"link", ""},
    {"location", ""},
    {"max-forwards", ""},
    {"proxy-authenticate", ""},
    {"proxy-authorization", ""},
    {"range", ""},
    {"referer", ""},
    {"refresh", ""},
    {"retry-after", ""},
    {"server", ""},
    {"set-cookie", ""},
    {"strict-transport-security", ""},
    {"transfer-encoding", ""},
    {"user-agent", ""},
    {"vary", ""},
    {"via", ""},
    {"www-authenticate", ""},
}};

constexpr std::size_t kEntryOverhead = 32;  // RFC 7541 4.1, and RFC 9113 6.5.2 likewise
// No index, length or table size here comes near this; a larger integer is an attack or garbage.
constexpr std::uint64_t kMaxInteger = std::uint64_t{1} << 32;
constexpr int kMaxContinuationBytes = 10;

// Reads a header block front to back; every read checks the bytes are there.
class BlockReader {
 public:
  explicit BlockReader(std::string_view block) : block_(block) {}

  bool done() const { return at_ == block_.size(); }
  std::uint8_t peek() const { return static_cast<std::uint8_t>(block_[at_]); }

  // An integer with an N-bit prefix (RFC 7541 5.1), starting at the current byte.
  std::size_t integer(int prefix_bits) {
    if (done()) throw HpackError("hpack: an integer runs past the end of the block");
    const std::uint8_t prefix_max = static_cast<std::uint8_t>((1u << prefix_bits) - 1);
    std::uint64_t value = static_cast<std::uint8_t>(block_[at_++]) & prefix_max;
    if (value < prefix_max) return static_cast<std::size_t>(value);
    for (int count = 0, shift = 0; count < kMaxContinuationBytes; ++count, shift += 7) {
      if (done()) throw HpackError("hpack: an integer runs past the end of the block");
      const auto byte = static_cast<std::uint8_t>(block_[at_++]);
      // A shift past 35 bits could lose bits; with kMaxInteger at 2^32 any nonzero there is
      // too large anyway.
      if ((byte & 0x7f) != 0) {
        if (shift > 35) throw HpackError("hpack: an integer is too large");
        value += std::uint64_t{byte & 0x7fu} << shift;
        if (value > kMaxInteger) throw HpackError("hpack: an integer is too large");
      }
      if ((byte & 0x80) == 0) return static_cast<std::size_t>(value);
    }
    throw HpackError("hpack: an integer has too many continuation bytes");
  }

  // A string literal (RFC 7541 5.2), Huffman-coded or raw.
  std::string string() {
    if (done()) throw HpackError("hpack: a string runs past the end of the block");
    const bool huffman = (peek() & 0x80) != 0;
    const std::size_t length = integer(7);
    if (length > block_.size() - at_)
      throw HpackError("hpack: a string runs past the end of the block");
    const std::string_view bytes = block_.substr(at_, length);
    at_ += length;
    if (!huffman) return std::string(bytes);
    std::string decoded;
    decoded.reserve(length * 8 / 5);  // the shortest code is 5 bits
    if (!huffman_decode(bytes, decoded)) throw HpackError("hpack: an invalid Huffman string");
    return decoded;
  }

 private:
  std::string_view block_;
  std::size_t at_ = 0;
};

void encode_integer(std::size_t value, int prefix_bits, std::uint8_t pattern, std::string& out) {
  const std::size_t prefix_max = (std::size_t{1} << prefix_bits) - 1;
  if (value < prefix_max) {
    out.push_back(static_cast<char>(pattern | value));
    return;
  }
  out.push_back(static_cast<char>(pattern | prefix_max));
  value -= prefix_max;
  while (value >= 0x80) {
    out.push_back(static_cast<char>(0x80 | (value & 0x7f)));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

void encode_raw_string(std::string_view text, std::string& out) {
  encode_integer(text.size(), 7, 0x00, out);  // H bit clear
  out.append(text);
}

// The static table index of the first entry named `name`, or 0.
std::size_t static_name_index(std::string_view name) {
  for (std::size_t i = 0; i < kStaticTable.size(); ++i)
    if (kStaticTable[i].name == name) return i + 1;
  return 0;
}

}  // namespace

HpackDecoder::HpackDecoder(std::size_t max_table_size)
    : max_table_size_(max_table_size), capacity_(max_table_size) {}

HpackDecoder::FieldView HpackDecoder::field_at(std::size_t index) const {
  if (index == 0) throw HpackError("hpack: index 0");
  if (index <= kStaticTable.size()) {
    const StaticEntry& entry = kStaticTable[index - 1];
    return {entry.name, entry.value};
  }
  const std::size_t dynamic = index - kStaticTable.size() - 1;
  if (dynamic >= table_.size()) throw HpackError("hpack: an index past the end of the tables");
  return {table_[dynamic].name, table_[dynamic].value};
}

void HpackDecoder::evict_to(std::size_t limit) {
  while (table_bytes_ > limit) {
    const Header& oldest = table_.back();
    table_bytes_ -= oldest.name.size() + oldest.value.size() + kEntryOverhead;
    table_.pop_back();
  }
}

void HpackDecoder::insert(Header header) {
  const std::size_t size = header.name.size() + header.value.size() + kEntryOverhead;
  // RFC 7541 4.4: an entry larger than the table empties it and is not added, without error.
  if (size > capacity_) {
    evict_to(0);
    return;
  }
  evict_to(capacity_ - size);
  table_bytes_ += size;
  table_.push_front(std::move(header));
}

void HpackDecoder::decode(std::string_view block, std::vector<Header>& out,
                          std::size_t max_list_bytes) {
  BlockReader reader(block);
  std::size_t list_bytes = 0;
  bool at_block_start = true;  // size updates may come only before the first field
  const auto emit = [&](Header header) {
    list_bytes += header.name.size() + header.value.size() + kEntryOverhead;
    if (list_bytes > max_list_bytes) throw HpackError("hpack: the header list is too large");
    out.push_back(std::move(header));
  };
  while (!reader.done()) {
    const std::uint8_t first = reader.peek();
    if ((first & 0xe0) == 0x20) {
      // 001xxxxx: dynamic table size update (RFC 7541 6.3). Several in a row are allowed, as
      // RFC 7541 4.2 has an encoder signal the smallest size and then the final one.
      if (!at_block_start) throw HpackError("hpack: a table size update after a header field");
      const std::size_t size = reader.integer(5);
      if (size > max_table_size_)
        throw HpackError("hpack: a table size update above SETTINGS_HEADER_TABLE_SIZE");
      capacity_ = size;
      evict_to(capacity_);
      continue;
    }
    at_block_start = false;
    if (first & 0x80) {
      // 1xxxxxxx: indexed field (RFC 7541 6.1).
      const FieldView field = field_at(reader.integer(7));
      emit(Header{std::string(field.name), std::string(field.value)});
      continue;
    }
    // 01xxxxxx: literal with incremental indexing (6.2.1); 0000xxxx without indexing (6.2.2);
    // 0001xxxx never indexed (6.2.3). The last two decode alike.
    const bool indexing = (first & 0x40) != 0;
    const std::size_t name_index = reader.integer(indexing ? 6 : 4);
    Header header;
    // The name is copied before any eviction the insertion makes, which may drop its entry.
    header.name = name_index == 0 ? reader.string() : std::string(field_at(name_index).name);
    header.value = reader.string();
    if (indexing) insert(header);
    emit(std::move(header));
  }
}

void encode_header(std::string_view name, std::string_view value, std::string& out) {
  if (name == ":status" && value == "200") {
    out.push_back(static_cast<char>(0x80 | 8));  // indexed, static index 8
    return;
  }
  const std::size_t name_index = static_name_index(name);
  encode_integer(name_index, 4, 0x00, out);  // 0000xxxx: literal without indexing
  if (name_index == 0) encode_raw_string(name, out);
  encode_raw_string(value, out);
}

}  // namespace onepass::http2

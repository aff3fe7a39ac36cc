// Unicode helpers shared by every tokenizer source: strict UTF-8 decoding (text arrives from
// clients as bytes), code point classes as BERT and the Rust `tokenizers` crate define them, and
// normalization / case mapping on top of utf8proc (no hand-made tables).
//
// Functions that transform text can report, for each output code point, the index of the input
// code point it came from (`source_index`), so callers can keep offsets into the original text.
// An output code point built from several inputs (composition) points at the first of them; an
// input that expands into several outputs (decomposition) is the source of each of them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace onepass::tokenizer::unicode {

// Throws onepass::Error(kInvalidInput) for truncated sequences, stray continuation bytes,
// overlong forms, surrogates (U+D800..U+DFFF) and values above U+10FFFF, naming the byte offset.
void validate_utf8(std::string_view text);

// Decodes UTF-8 (throws as validate_utf8). With `byte_offsets`, it receives the byte offset of
// each code point followed by one final entry equal to text.size().
std::u32string decode_utf8(std::string_view text,
                           std::vector<std::uint32_t>* byte_offsets = nullptr);

// Number of UTF-8 bytes of a code point (1..4).
std::size_t utf8_length(char32_t cp);
void append_utf8(char32_t cp, std::string& out);
std::string encode_utf8(std::u32string_view text);

// Unicode White_Space property (Rust's char::is_whitespace): Zs, Zl, Zp, U+0009..U+000D, U+0085.
bool is_white_space(char32_t cp);
// Python's str.isspace() for one code point (what str.split(), strip(), lstrip() and rstrip()
// treat as whitespace): the White_Space property plus the separators U+001C..U+001F.
bool is_python_space(char32_t cp);
// Python's str.strip() without arguments: is_python_space code points removed from both ends.
std::string python_strip(std::string_view text);
// BERT's _is_whitespace (transformers, Python): space, \t, \n, \r or category Zs.
bool is_bert_whitespace(char32_t cp);
// BERT's _is_control: any category C* (Cc, Cf, Cn, Co, Cs) except \t, \n and \r.
bool is_control(char32_t cp);
// BERT's _is_punctuation: ASCII 33-47, 58-64, 91-96, 123-126, or any category P*.
bool is_punctuation(char32_t cp);
// The CJK ideograph blocks BERT lists (Python transformers' _is_chinese_char).
bool is_chinese_char(char32_t cp);
// The same blocks as the Rust `tokenizers` BertNormalizer writes them: identical except that
// its Extension C/D range starts at U+2B920 instead of U+2B820 (the Rust crate's quirk).
bool is_chinese_char_rust(char32_t cp);
bool is_nonspacing_mark(char32_t cp);  // category Mn
bool is_mark(char32_t cp);             // Mn, Mc, Me
bool is_letter(char32_t cp);           // L*
bool is_number(char32_t cp);           // N*
bool is_decimal_digit(char32_t cp);    // Nd
// `\w` of the Rust regex crate (Alphabetic, marks, Nd, Pc, Join_Control): letters, marks, Nd,
// Nl, Pc, U+200C/U+200D and the circled/squared letters that are Other_Alphabetic.
bool is_word_char(char32_t cp);
// Canonical combining class (0 for starters).
int combining_class(char32_t cp);
// True when utf8proc knows the code point as assigned (category not Cn).
bool is_assigned(char32_t cp);

enum class NormalForm { kNFC, kNFD, kNFKC, kNFKD };

// Unicode normalization of the whole text (canonical ordering included).
std::u32string normalize(std::u32string_view text, NormalForm form,
                         std::vector<std::uint32_t>* source_index = nullptr);

// NFD, then every nonspacing mark (Mn) removed: BERT's _run_strip_accents.
std::u32string strip_accents(std::u32string_view text,
                             std::vector<std::uint32_t>* source_index = nullptr);

// Full Unicode lowercase mapping per code point (U+0130 becomes "i\u0307", as Rust's
// char::to_lowercase). With `final_sigma`, a capital sigma that ends a word becomes U+03C2 as
// Python's str.lower() does; the Rust tokenizers crate maps code points alone (no final sigma).
std::u32string lowercase(std::u32string_view text, bool final_sigma,
                         std::vector<std::uint32_t>* source_index = nullptr);

}  // namespace onepass::tokenizer::unicode

// Unicode helpers on utf8proc; see unicode.h.
#include "tokenizer/common/unicode.h"

#include <utf8proc.h>

#include <algorithm>
#include <string>

#include "base/error.h"

namespace onepass::tokenizer::unicode {
namespace {

[[noreturn]] void invalid_utf8(std::size_t at, const char* what) {
  throw Error(ErrorKind::kInvalidInput,
              "invalid UTF-8 in the input text at byte " + std::to_string(at) + ": " + what);
}

utf8proc_category_t category(char32_t cp) {
  return utf8proc_category(static_cast<utf8proc_int32_t>(cp));
}

// Decodes one code point at `i`, advancing `i`; throws on any malformed form.
char32_t decode_one(std::string_view text, std::size_t& i) {
  const auto b0 = static_cast<unsigned char>(text[i]);
  if (b0 < 0x80) {
    ++i;
    return b0;
  }
  std::size_t len = 0;
  char32_t cp = 0;
  char32_t min = 0;
  if ((b0 & 0xE0) == 0xC0) {
    len = 2, cp = b0 & 0x1F, min = 0x80;
  } else if ((b0 & 0xF0) == 0xE0) {
    len = 3, cp = b0 & 0x0F, min = 0x800;
  } else if ((b0 & 0xF8) == 0xF0) {
    len = 4, cp = b0 & 0x07, min = 0x10000;
  } else {
    invalid_utf8(i, (b0 & 0xC0) == 0x80 ? "unexpected continuation byte" : "invalid lead byte");
  }
  if (i + len > text.size()) invalid_utf8(i, "truncated sequence");
  for (std::size_t k = 1; k < len; ++k) {
    const auto b = static_cast<unsigned char>(text[i + k]);
    if ((b & 0xC0) != 0x80) invalid_utf8(i, "truncated sequence");
    cp = (cp << 6) | (b & 0x3F);
  }
  if (cp < min) invalid_utf8(i, "overlong encoding");
  if (cp >= 0xD800 && cp <= 0xDFFF) invalid_utf8(i, "encoded surrogate");
  if (cp > 0x10FFFF) invalid_utf8(i, "code point above U+10FFFF");
  i += len;
  return cp;
}

// Python's final-sigma context uses Cased and Case_Ignorable; utf8proc has no such properties,
// so they are derived from categories plus the Word_Break MidLetter/MidNumLet characters.
bool is_cased(char32_t cp) {
  const auto c = category(cp);
  return c == UTF8PROC_CATEGORY_LU || c == UTF8PROC_CATEGORY_LL || c == UTF8PROC_CATEGORY_LT;
}

bool is_case_ignorable(char32_t cp) {
  switch (cp) {
    case 0x27:
    case 0x2E:
    case 0x3A:
    case 0xB7:
    case 0x387:
    case 0x55F:
    case 0x5F4:
    case 0x2018:
    case 0x2019:
    case 0x2024:
    case 0x2027:
    case 0xFE13:
    case 0xFE52:
    case 0xFE55:
    case 0xFF07:
    case 0xFF0E:
    case 0xFF1A:
      return true;
    default:
      break;
  }
  const auto c = category(cp);
  return c == UTF8PROC_CATEGORY_MN || c == UTF8PROC_CATEGORY_ME || c == UTF8PROC_CATEGORY_CF ||
         c == UTF8PROC_CATEGORY_LM || c == UTF8PROC_CATEGORY_SK;
}

bool sigma_is_final(std::u32string_view text, std::size_t i) {
  std::size_t j = i;
  bool before = false;
  while (j > 0) {
    --j;
    if (is_case_ignorable(text[j])) continue;
    before = is_cased(text[j]);
    break;
  }
  if (!before) return false;
  for (std::size_t k = i + 1; k < text.size(); ++k) {
    if (is_case_ignorable(text[k])) continue;
    return !is_cased(text[k]);
  }
  return true;
}

// Decomposes every code point (canonical or compatibility), then puts combining marks in
// canonical order with a stable sort by combining class inside each run of non-starters.
void decompose(std::u32string_view text, bool compat, std::u32string& out,
               std::vector<std::uint32_t>& src) {
  const int options = UTF8PROC_DECOMPOSE | (compat ? UTF8PROC_COMPAT : 0);
  utf8proc_int32_t buf[32];
  for (std::size_t i = 0; i < text.size(); ++i) {
    int boundclass = 0;
    const auto n = utf8proc_decompose_char(static_cast<utf8proc_int32_t>(text[i]), buf, 32,
                                           static_cast<utf8proc_option_t>(options), &boundclass);
    ONEPASS_CHECK(n > 0 && n <= 32, "utf8proc_decompose_char failed");
    for (utf8proc_ssize_t k = 0; k < n; ++k) {
      out.push_back(static_cast<char32_t>(buf[k]));
      src.push_back(static_cast<std::uint32_t>(i));
    }
  }
  std::size_t i = 0;
  while (i < out.size()) {
    if (combining_class(out[i]) == 0) {
      ++i;
      continue;
    }
    std::size_t end = i;
    while (end < out.size() && combining_class(out[end]) != 0) ++end;
    if (end - i > 1) {
      std::vector<std::pair<char32_t, std::uint32_t>> run;
      for (std::size_t k = i; k < end; ++k) run.emplace_back(out[k], src[k]);
      std::stable_sort(run.begin(), run.end(), [](const auto& a, const auto& b) {
        return combining_class(a.first) < combining_class(b.first);
      });
      for (std::size_t k = i; k < end; ++k) out[k] = run[k - i].first, src[k] = run[k - i].second;
    }
    i = end;
  }
}

}  // namespace

void validate_utf8(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size()) decode_one(text, i);
}

std::u32string decode_utf8(std::string_view text, std::vector<std::uint32_t>* byte_offsets) {
  std::u32string out;
  out.reserve(text.size());
  if (byte_offsets) byte_offsets->clear();
  std::size_t i = 0;
  while (i < text.size()) {
    if (byte_offsets) byte_offsets->push_back(static_cast<std::uint32_t>(i));
    out.push_back(decode_one(text, i));
  }
  if (byte_offsets) byte_offsets->push_back(static_cast<std::uint32_t>(text.size()));
  return out;
}

std::size_t utf8_length(char32_t cp) {
  return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
}

void append_utf8(char32_t cp, std::string& out) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

std::string encode_utf8(std::u32string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char32_t cp : text) append_utf8(cp, out);
  return out;
}

bool is_white_space(char32_t cp) {
  if ((cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || cp == 0x85) return true;
  if (cp < 0xA0) return false;
  const auto c = category(cp);
  return c == UTF8PROC_CATEGORY_ZS || c == UTF8PROC_CATEGORY_ZL || c == UTF8PROC_CATEGORY_ZP;
}

bool is_python_space(char32_t cp) {
  // CPython's _PyUnicode_IsWhitespace: bidirectional class WS, B or S, or category Zs.
  if (cp <= 0x20) return (cp >= 0x09 && cp <= 0x0D) || (cp >= 0x1C && cp <= 0x20);
  if (cp == 0x85 || cp == 0xA0 || cp == 0x1680 || cp == 0x2028 || cp == 0x2029) return true;
  if (cp >= 0x2000 && cp <= 0x200A) return true;
  return cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

bool is_bert_whitespace(char32_t cp) {
  if (cp == ' ' || cp == '\t' || cp == '\n' || cp == '\r') return true;
  return category(cp) == UTF8PROC_CATEGORY_ZS;
}

bool is_control(char32_t cp) {
  if (cp == '\t' || cp == '\n' || cp == '\r') return false;
  const auto c = category(cp);
  return c == UTF8PROC_CATEGORY_CC || c == UTF8PROC_CATEGORY_CF || c == UTF8PROC_CATEGORY_CN ||
         c == UTF8PROC_CATEGORY_CO || c == UTF8PROC_CATEGORY_CS;
}

bool is_punctuation(char32_t cp) {
  if ((cp >= 33 && cp <= 47) || (cp >= 58 && cp <= 64) || (cp >= 91 && cp <= 96) ||
      (cp >= 123 && cp <= 126))
    return true;
  const auto c = category(cp);
  return c >= UTF8PROC_CATEGORY_PC && c <= UTF8PROC_CATEGORY_PO;
}

bool is_chinese_char(char32_t cp) {
  return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) ||
         (cp >= 0x20000 && cp <= 0x2A6DF) || (cp >= 0x2A700 && cp <= 0x2B73F) ||
         (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B820 && cp <= 0x2CEAF) ||
         (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

bool is_chinese_char_rust(char32_t cp) {
  if (cp >= 0x2B820 && cp < 0x2B920) return false;
  return is_chinese_char(cp);
}

bool is_nonspacing_mark(char32_t cp) { return category(cp) == UTF8PROC_CATEGORY_MN; }

bool is_mark(char32_t cp) {
  const auto c = category(cp);
  return c == UTF8PROC_CATEGORY_MN || c == UTF8PROC_CATEGORY_MC || c == UTF8PROC_CATEGORY_ME;
}

bool is_letter(char32_t cp) {
  const auto c = category(cp);
  return c >= UTF8PROC_CATEGORY_LU && c <= UTF8PROC_CATEGORY_LO;
}

bool is_number(char32_t cp) {
  const auto c = category(cp);
  return c == UTF8PROC_CATEGORY_ND || c == UTF8PROC_CATEGORY_NL || c == UTF8PROC_CATEGORY_NO;
}

bool is_decimal_digit(char32_t cp) { return category(cp) == UTF8PROC_CATEGORY_ND; }

bool is_word_char(char32_t cp) {
  if (cp == 0x200C || cp == 0x200D) return true;
  // Other_Alphabetic symbols (circled and squared Latin letters) are Alphabetic, hence \w,
  // although their category is So; every other Other_Alphabetic code point is a mark.
  if ((cp >= 0x24B6 && cp <= 0x24E9) || (cp >= 0x1F130 && cp <= 0x1F149) ||
      (cp >= 0x1F150 && cp <= 0x1F169) || (cp >= 0x1F170 && cp <= 0x1F189))
    return true;
  const auto c = category(cp);
  return (c >= UTF8PROC_CATEGORY_LU && c <= UTF8PROC_CATEGORY_LO) ||
         (c >= UTF8PROC_CATEGORY_MN && c <= UTF8PROC_CATEGORY_ME) || c == UTF8PROC_CATEGORY_ND ||
         c == UTF8PROC_CATEGORY_NL || c == UTF8PROC_CATEGORY_PC;
}

int combining_class(char32_t cp) {
  if (cp < 0x300) return 0;
  return utf8proc_get_property(static_cast<utf8proc_int32_t>(cp))->combining_class;
}

bool is_assigned(char32_t cp) { return category(cp) != UTF8PROC_CATEGORY_CN; }

std::u32string normalize(std::u32string_view text, NormalForm form,
                         std::vector<std::uint32_t>* source_index) {
  std::u32string out;
  std::vector<std::uint32_t> src;
  out.reserve(text.size());
  src.reserve(text.size());
  const bool compat = form == NormalForm::kNFKC || form == NormalForm::kNFKD;
  decompose(text, compat, out, src);
  if (form == NormalForm::kNFC || form == NormalForm::kNFKC) {
    // utf8proc composes in place; each composed code point then stands for as many decomposed
    // code points as its own canonical decomposition has, which gives the alignment back.
    std::u32string decomposed = out;
    std::vector<utf8proc_int32_t> buf(out.begin(), out.end());
    const auto n = utf8proc_normalize_utf32(
        buf.data(), static_cast<utf8proc_ssize_t>(buf.size()),
        static_cast<utf8proc_option_t>(UTF8PROC_COMPOSE | UTF8PROC_STABLE));
    ONEPASS_CHECK(n >= 0, "utf8proc composition failed");
    out.assign(buf.begin(), buf.begin() + n);
    std::vector<std::uint32_t> composed_src;
    composed_src.reserve(out.size());
    std::size_t pos = 0;
    for (char32_t cp : out) {
      composed_src.push_back(src[std::min(pos, src.size() - 1)]);
      utf8proc_int32_t tmp[32];
      int boundclass = 0;
      const auto k = utf8proc_decompose_char(static_cast<utf8proc_int32_t>(cp), tmp, 32,
                                             UTF8PROC_DECOMPOSE, &boundclass);
      pos += static_cast<std::size_t>(std::max<utf8proc_ssize_t>(k, 1));
    }
    src = std::move(composed_src);
  }
  if (source_index) *source_index = std::move(src);
  return out;
}

std::u32string strip_accents(std::u32string_view text, std::vector<std::uint32_t>* source_index) {
  std::vector<std::uint32_t> src;
  const std::u32string nfd = normalize(text, NormalForm::kNFD, &src);
  std::u32string out;
  out.reserve(nfd.size());
  if (source_index) source_index->clear();
  for (std::size_t i = 0; i < nfd.size(); ++i) {
    if (is_nonspacing_mark(nfd[i])) continue;
    out.push_back(nfd[i]);
    if (source_index) source_index->push_back(src[i]);
  }
  return out;
}

std::u32string lowercase(std::u32string_view text, bool final_sigma,
                         std::vector<std::uint32_t>* source_index) {
  std::u32string out;
  out.reserve(text.size());
  if (source_index) source_index->clear();
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char32_t cp = text[i];
    auto push = [&](char32_t c) {
      out.push_back(c);
      if (source_index) source_index->push_back(static_cast<std::uint32_t>(i));
    };
    if (cp == 0x130) {  // the one unconditional multi-code-point lowercase mapping
      push(U'i');
      push(0x307);
    } else if (cp == 0x3A3 && final_sigma && sigma_is_final(text, i)) {
      push(0x3C2);
    } else {
      push(static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(cp))));
    }
  }
  return out;
}

std::string python_strip(std::string_view text) {
  const std::u32string chars = decode_utf8(text);
  std::size_t begin = 0;
  std::size_t end = chars.size();
  while (begin < end && is_python_space(chars[begin])) ++begin;
  while (end > begin && is_python_space(chars[end - 1])) --end;
  return encode_utf8(std::u32string_view(chars).substr(begin, end - begin));
}

}  // namespace onepass::tokenizer::unicode

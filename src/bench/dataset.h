// Benchmark inputs: JSON lines {"text"} or {"text","text_pair"} with an optional "label". A small
// multilingual NLI sample set is compiled into the binary, so `onepass bench` works anywhere.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace onepass::bench {

struct Sample {
  std::string text;
  std::optional<std::string> text_pair;
  std::optional<std::string> label;
  // The entity types an extract workload asks for in this text (the line's "labels"); empty:
  // default_extract_labels().
  std::vector<std::string> labels = {};
};

// The labels of a sample that names none: generic entity types any open-label extractor
// (GLiNER) finds in the bundled texts.
const std::vector<std::string>& default_extract_labels();

// Parses JSON lines; blank lines are skipped. Throws Error(kInvalidInput) naming the line for a
// line that is not an object with a string "text".
std::vector<Sample> parse_dataset(std::string_view jsonl, std::string_view name);
std::vector<Sample> load_dataset(const std::filesystem::path& path);
// The bundled multilingual NLI set (premise/hypothesis pairs, labels entailment/neutral/
// contradiction).
std::vector<Sample> default_dataset();

// --pad-to-max without a tokenizer: repeats the text until it surely holds at least `max_len`
// tokens (at least max_len words and 4*max_len code points, since one token never spans two
// words and rarely more than four characters), so the server's truncation makes every input
// exactly max_len tokens long. A pair shares the budget: each side gets the full length and
// longest-first truncation splits it evenly.
std::string lengthen_text(std::string_view text, std::size_t max_len);
Sample lengthen_sample(const Sample& sample, std::size_t max_len);

}  // namespace onepass::bench

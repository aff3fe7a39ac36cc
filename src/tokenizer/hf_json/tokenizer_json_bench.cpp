// Google Benchmark: tokens per second on one core for every tokenizer.json kind of the fixtures
// (WordPiece: BERT; Unigram: XLM-R and DeBERTa-v2; byte-level BPE: RoBERTa) on
// tests/data/bench/multilingual.txt. "Line" encodes each line as one request with special tokens;
// "Document" encodes the whole file as one text. Linked into tokenizer_bench (main lives in
// slow/slow_tokenizers_bench.cpp).
#include <benchmark/benchmark.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "tokenizer/sources.h"

namespace {

namespace fs = std::filesystem;
using onepass::tokenizer::Tokenizer;

const fs::path kData = ONEPASS_TEST_DATA_DIR;

const std::vector<std::string>& bench_lines() {
  static const std::vector<std::string> all = [] {
    std::ifstream in(kData / "bench/multilingual.txt");
    std::vector<std::string> out;
    std::string line;
    while (std::getline(in, line))
      if (!line.empty()) out.push_back(line);
    return out;
  }();
  return all;
}

const Tokenizer& fixture(const std::string& relative) {
  // One tokenizer per fixture, loaded on first use and kept for the process.
  static std::vector<std::pair<std::string, std::unique_ptr<Tokenizer>>> cache;
  for (const auto& [name, tok] : cache)
    if (name == relative) return *tok;
  cache.emplace_back(relative, onepass::tokenizer::load_tokenizer_json(
                                   kData / "fixtures" / relative / "tokenizer.json"));
  return *cache.back().second;
}

void lines(benchmark::State& state, const std::string& relative) {
  const Tokenizer& tok = fixture(relative);
  std::size_t tokens = 0;
  std::size_t bytes = 0;
  for (auto _ : state) {
    for (const auto& line : bench_lines()) {
      const auto e = tok.encode(line, std::nullopt);
      tokens += e.size();
      bytes += line.size();
      benchmark::DoNotOptimize(e.ids.data());
    }
  }
  state.counters["tokens"] =
      benchmark::Counter(static_cast<double>(tokens), benchmark::Counter::kIsRate);
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes));
}

void document(benchmark::State& state, const std::string& relative) {
  const Tokenizer& tok = fixture(relative);
  std::string doc;
  for (const auto& line : bench_lines()) doc += line + "\n";
  std::size_t tokens = 0;
  for (auto _ : state) {
    const auto e = tok.encode(doc, std::nullopt);
    tokens += e.size();
    benchmark::DoNotOptimize(e.ids.data());
  }
  state.counters["tokens"] =
      benchmark::Counter(static_cast<double>(tokens), benchmark::Counter::kIsRate);
  state.SetBytesProcessed(
      static_cast<std::int64_t>(doc.size() * static_cast<std::size_t>(state.iterations())));
}

BENCHMARK_CAPTURE(lines, TokenizerJson_WordPiece_Bert_Line, std::string("models/bert-tiny-nli"));
BENCHMARK_CAPTURE(lines, TokenizerJson_Unigram_XlmR_Line, std::string("models/xlmr-tiny-nli"));
BENCHMARK_CAPTURE(lines, TokenizerJson_Unigram_DebertaV2_Line,
                  std::string("models/deberta-v2-tiny-nli"));
BENCHMARK_CAPTURE(lines, TokenizerJson_BPE_Roberta_Line,
                  std::string("tokenizers/roberta-bpe-tiny"));
BENCHMARK_CAPTURE(document, TokenizerJson_WordPiece_Bert_Document,
                  std::string("models/bert-tiny-nli"));
BENCHMARK_CAPTURE(document, TokenizerJson_Unigram_XlmR_Document,
                  std::string("models/xlmr-tiny-nli"));
BENCHMARK_CAPTURE(document, TokenizerJson_BPE_Roberta_Document,
                  std::string("tokenizers/roberta-bpe-tiny"));

}  // namespace

// Google Benchmark: tokens per second on one core for the slow-tokenizer sources (SentencePiece:
// XLM-R and DeBERTa-v2 fixtures; WordPiece: the BERT fixture, cased and uncased) on the
// multilingual text tests/data/bench/multilingual.txt. "Line" encodes each line as one request
// with special tokens (what a server does); "Pairs" encodes consecutive lines as text pairs;
// "Document" encodes the whole file as one text. The tokens counter is ids produced per second.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace {

namespace fs = std::filesystem;
using onepass::tokenizer::Tokenizer;

const fs::path kData = ONEPASS_TEST_DATA_DIR;

const std::vector<std::string>& lines() {
  static const std::vector<std::string> all = [] {
    std::ifstream in(kData / "bench/multilingual.txt");
    std::vector<std::string> out;
    std::string line;
    while (std::getline(in, line)) {
      if (!line.empty()) out.push_back(line);
    }
    return out;
  }();
  return all;
}

std::unique_ptr<Tokenizer> load(const std::string& model, const std::string& file) {
  const fs::path dir = kData / "fixtures/models" / model;
  return onepass::tokenizer::load_tokenizer(dir, dir / file);
}

// The uncased variant: the BERT fixture's vocab.txt with do_lower_case (and accent stripping).
std::unique_ptr<Tokenizer> load_uncased() {
  const fs::path dir = fs::temp_directory_path() / "onepass_slow_bench_uncased";
  fs::create_directories(dir);
  fs::copy_file(kData / "fixtures/models/bert-tiny-nli/vocab.txt", dir / "vocab.txt",
                fs::copy_options::overwrite_existing);
  std::ofstream(dir / "tokenizer_config.json") << R"({"do_lower_case": true})";
  auto tokenizer = onepass::tokenizer::load_tokenizer(dir, dir / "vocab.txt");
  fs::remove_all(dir);
  return tokenizer;
}

void report(benchmark::State& state, std::size_t tokens, std::size_t bytes) {
  state.counters["tokens"] =
      benchmark::Counter(static_cast<double>(tokens), benchmark::Counter::kIsRate);
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes));
}

void run_lines(benchmark::State& state, const Tokenizer& tokenizer) {
  std::size_t tokens = 0;
  std::size_t bytes = 0;
  for (auto _ : state) {
    for (const auto& line : lines()) {
      const auto encoding = tokenizer.encode(line, std::nullopt);
      tokens += encoding.size();
      bytes += line.size();
      benchmark::DoNotOptimize(encoding.ids.data());
    }
  }
  report(state, tokens, bytes);
}

void run_pairs(benchmark::State& state, const Tokenizer& tokenizer) {
  std::size_t tokens = 0;
  std::size_t bytes = 0;
  const onepass::tokenizer::TruncationOptions truncation{128};
  for (auto _ : state) {
    for (std::size_t i = 0; i + 1 < lines().size(); i += 2) {
      const auto encoding = tokenizer.encode(lines()[i], lines()[i + 1], truncation);
      tokens += encoding.size();
      bytes += lines()[i].size() + lines()[i + 1].size();
      benchmark::DoNotOptimize(encoding.ids.data());
    }
  }
  report(state, tokens, bytes);
}

void run_document(benchmark::State& state, const Tokenizer& tokenizer) {
  std::string document;
  for (const auto& line : lines()) document += line + "\n";
  std::size_t tokens = 0;
  for (auto _ : state) {
    const auto encoding = tokenizer.encode(document, std::nullopt);
    tokens += encoding.size();
    benchmark::DoNotOptimize(encoding.ids.data());
  }
  report(state, tokens, document.size() * static_cast<std::size_t>(state.iterations()));
}

const Tokenizer& xlmr() {
  static const auto t = load("xlmr-tiny-nli", "sentencepiece.bpe.model");
  return *t;
}
const Tokenizer& deberta() {
  static const auto t = load("deberta-v2-tiny-nli", "spm.model");
  return *t;
}
const Tokenizer& bert_cased() {
  static const auto t = load("bert-tiny-nli", "vocab.txt");
  return *t;
}
const Tokenizer& bert_uncased() {
  static const auto t = load_uncased();
  return *t;
}

void BM_SentencePiece_XlmR_Line(benchmark::State& s) { run_lines(s, xlmr()); }
void BM_SentencePiece_XlmR_Pairs(benchmark::State& s) { run_pairs(s, xlmr()); }
void BM_SentencePiece_XlmR_Document(benchmark::State& s) { run_document(s, xlmr()); }
void BM_SentencePiece_DebertaV2_Line(benchmark::State& s) { run_lines(s, deberta()); }
void BM_WordPiece_Cased_Line(benchmark::State& s) { run_lines(s, bert_cased()); }
void BM_WordPiece_Cased_Pairs(benchmark::State& s) { run_pairs(s, bert_cased()); }
void BM_WordPiece_Cased_Document(benchmark::State& s) { run_document(s, bert_cased()); }
void BM_WordPiece_Uncased_Line(benchmark::State& s) { run_lines(s, bert_uncased()); }

BENCHMARK(BM_SentencePiece_XlmR_Line);
BENCHMARK(BM_SentencePiece_XlmR_Pairs);
BENCHMARK(BM_SentencePiece_XlmR_Document);
BENCHMARK(BM_SentencePiece_DebertaV2_Line);
BENCHMARK(BM_WordPiece_Cased_Line);
BENCHMARK(BM_WordPiece_Cased_Pairs);
BENCHMARK(BM_WordPiece_Cased_Document);
BENCHMARK(BM_WordPiece_Uncased_Line);

}  // namespace

BENCHMARK_MAIN();

// The one list of the fixture models under tests/data/fixtures/models: each folder's family, task
// and the properties tests choose fixtures by. A test that runs "every classifier" or "every
// fixture whose int8 the gate refuses" filters this catalogue instead of keeping its own list, so
// a new fixture is one line in fixture_catalogue.cpp (fixture_catalogue_test holds the catalogue
// and the folders to each other, and each line's task and file flags to the folder's files).
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace onepass::testing {

// The architecture family a fixture exercises (one folder per family under src/model).
enum class FixtureFamily {
  kBert,
  kRoberta,
  kXlmr,
  kCamembert,
  kDeberta,
  kDebertaV2,
  kDistilbert,
  kElectra,
  kMpnet,
  kModernbert,
  kNomicBert,
  kGte,
  kGliner,  // GLiNER (gliner_config.json) on a DeBERTa-v2 backbone: architectures/gliner
};

// What the fixture's head does; each maps to the "task" its golden.json names.
enum class FixtureTask {
  kClassifier,         // "nli": sequence classification with several labels
  kReranker,           // "rerank": one-logit cross-encoder
  kEmbedder,           // "embedding": pooled hidden states
  kTokenClassifier,    // "token_classification": NER
  kQuestionAnswering,  // "question_answering": start and end logits per window
  kSplade,             // "sparse_embedding": a *ForMaskedLM folder named and served as SPLADE
  kMaskedLm,           // "sparse_embedding": any other *ForMaskedLM folder (fill-mask, SPLADE)
  kExtractor,          // "extract": GLiNER's predict_entities (tools/fixtures/gliner.py)
};

// Properties tests select fixtures by; a fixture holds any combination.
enum FixtureFlag : std::uint32_t {
  kNoFlags = 0,
  // A sentence-transformers folder (modules.json): its golden.json holds sentence-transformers'
  // encode() (prompts, max_seq_length, its own modules). The golden suites leave these out; the
  // sentence-transformers tests name them.
  kSentenceTransformers = 1u << 0,
  // fill_mask_golden.json beside golden.json: transformers' FillMaskPipeline answers.
  kFillMaskGolden = 1u << 1,
  // The reduced-precision gate refuses this fixture's int8 on the built-in texts (its random
  // head leaves labels or scores too close); tests/model/precision_gate_test.cpp says why.
  kInt8Refused = 1u << 2,
  // Modelled by remote code (golden.json's "remote_code"), not by transformers itself.
  kRemoteCode = 1u << 3,
};

// The tokenizer files the folder carries (tokenizer.json may come beside any of them).
enum class FixtureTokenizer {
  kWordPiece,      // vocab.txt
  kSentencePiece,  // spm.model or sentencepiece.bpe.model
  kByteLevelBpe,   // vocab.json and merges.txt
};

constexpr FixtureFlag operator|(FixtureFlag a, FixtureFlag b) {
  return static_cast<FixtureFlag>(static_cast<std::uint32_t>(a) | static_cast<std::uint32_t>(b));
}

struct Fixture {
  std::string_view name;  // the folder under tests/data/fixtures/models
  FixtureFamily family;
  FixtureTask task;
  FixtureTokenizer tokenizer;
  FixtureFlag flags = kNoFlags;

  bool has(FixtureFlag flag) const { return (flags & flag) == flag; }
  // tests/data/fixtures/models/<name>.
  std::string dir() const;
};

// Every fixture model folder, grouped by family.
std::span<const Fixture> fixture_catalogue();

// The catalogue's fixtures `keep` accepts, in catalogue order, as folder names (what
// fixture_model() and gtest parameters take).
std::vector<std::string> fixtures_where(const std::function<bool(const Fixture&)>& keep);

// Those of one of `tasks`, sentence-transformers folders excluded: what the golden suites of
// a task run.
std::vector<std::string> fixtures_with_task(std::initializer_list<FixtureTask> tasks);

// The catalogue line of `name`; throws std::out_of_range for a folder it does not list.
const Fixture& fixture_named(std::string_view name);

// The "task" a golden.json of this task names ("nli", "rerank", ...).
std::string_view golden_task_name(FixtureTask task);

// A gtest parameter name for a fixture: "bert-tiny-nli" -> "bert_tiny_nli".
std::string fixture_test_name(std::string_view name);

}  // namespace onepass::testing

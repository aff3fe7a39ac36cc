#include "tests/support/fixture_catalogue.h"

#include <algorithm>
#include <stdexcept>

#include "tests/support/paths.h"

namespace onepass::testing {
namespace {

using F = FixtureFamily;
using T = FixtureTask;
using K = FixtureTokenizer;

// One line per folder of tests/data/fixtures/models (tests/data/fixtures/README.md describes
// each). A new fixture is one line here; fixture_catalogue_test fails until it has one. Constant
// (no constructor runs), so test files may filter it in their own globals at start-up.
constexpr Fixture kCatalogue[] = {
    // clang-format off
    {"bert-tiny-nli",              F::kBert,       T::kClassifier,        K::kWordPiece},
    {"bert-tiny-embed",            F::kBert,       T::kEmbedder,          K::kWordPiece},
    {"bert-tiny-rerank",           F::kBert,       T::kReranker,          K::kWordPiece},
    {"bert-tiny-ner",              F::kBert,       T::kTokenClassifier,   K::kWordPiece},
    {"bert-tiny-qa",               F::kBert,       T::kQuestionAnswering, K::kWordPiece},
    {"bert-tiny-splade",           F::kBert,       T::kSplade,            K::kWordPiece, kFillMaskGolden},
    {"bert-tiny-st-embed",         F::kBert,       T::kEmbedder,          K::kWordPiece, kSentenceTransformers},
    {"bert-tiny-st-dense",         F::kBert,       T::kEmbedder,          K::kWordPiece, kSentenceTransformers},

    {"roberta-tiny-qa",            F::kRoberta,    T::kQuestionAnswering, K::kByteLevelBpe},

    {"xlmr-tiny-nli",              F::kXlmr,       T::kClassifier,        K::kSentencePiece},
    {"xlmr-tiny-ner",              F::kXlmr,       T::kTokenClassifier,   K::kSentencePiece},
    {"xlmr-tiny-qa",               F::kXlmr,       T::kQuestionAnswering, K::kSentencePiece},
    {"xlmr-tiny-mlm",              F::kXlmr,       T::kMaskedLm,          K::kSentencePiece, kFillMaskGolden},

    {"camembert-tiny-nli",         F::kCamembert,  T::kClassifier,        K::kSentencePiece},
    {"camembert-tiny-ner",         F::kCamembert,  T::kTokenClassifier,   K::kSentencePiece},

    {"deberta-tiny-nli",           F::kDeberta,    T::kClassifier,        K::kByteLevelBpe},
    {"deberta-tiny-ner",           F::kDeberta,    T::kTokenClassifier,   K::kByteLevelBpe},
    {"deberta-tiny-mlm",           F::kDeberta,    T::kMaskedLm,          K::kByteLevelBpe, kFillMaskGolden},

    {"deberta-v2-tiny-nli",        F::kDebertaV2,  T::kClassifier,        K::kSentencePiece},
    {"deberta-v2-tiny-ner",        F::kDebertaV2,  T::kTokenClassifier,   K::kSentencePiece},
    {"deberta-v2-tiny-qa",         F::kDebertaV2,  T::kQuestionAnswering, K::kSentencePiece},
    {"deberta-v2-tiny-mlm",        F::kDebertaV2,  T::kMaskedLm,          K::kSentencePiece, kFillMaskGolden},
    {"deberta-v2-tiny-mlm-legacy", F::kDebertaV2,  T::kMaskedLm,          K::kSentencePiece, kFillMaskGolden},

    {"distilbert-tiny-nli",        F::kDistilbert, T::kClassifier,        K::kWordPiece, kInt8Refused},
    {"distilbert-tiny-ner",        F::kDistilbert, T::kTokenClassifier,   K::kWordPiece},
    {"distilbert-tiny-qa",         F::kDistilbert, T::kQuestionAnswering, K::kWordPiece},
    {"distilbert-tiny-splade",     F::kDistilbert, T::kSplade,            K::kWordPiece, kFillMaskGolden},

    {"electra-tiny-rerank",        F::kElectra,    T::kReranker,          K::kWordPiece},
    {"electra-tiny-ner",           F::kElectra,    T::kTokenClassifier,   K::kWordPiece},
    {"electra-tiny-mlm",           F::kElectra,    T::kMaskedLm,          K::kWordPiece, kFillMaskGolden},

    {"mpnet-tiny-nli",             F::kMpnet,      T::kClassifier,        K::kWordPiece, kInt8Refused},
    {"mpnet-tiny-embed",           F::kMpnet,      T::kEmbedder,          K::kWordPiece},
    {"mpnet-tiny-ner",             F::kMpnet,      T::kTokenClassifier,   K::kWordPiece},
    {"mpnet-tiny-mlm",             F::kMpnet,      T::kMaskedLm,          K::kWordPiece, kFillMaskGolden},

    {"modernbert-tiny-nli",        F::kModernbert, T::kClassifier,        K::kByteLevelBpe},
    {"modernbert-tiny-rerank",     F::kModernbert, T::kReranker,          K::kByteLevelBpe},
    {"modernbert-tiny-embed",      F::kModernbert, T::kEmbedder,          K::kByteLevelBpe},
    {"modernbert-tiny-ner",        F::kModernbert, T::kTokenClassifier,   K::kByteLevelBpe},
    {"modernbert-tiny-mlm",        F::kModernbert, T::kMaskedLm,          K::kByteLevelBpe, kFillMaskGolden},

    {"nomic-bert-tiny-nli",        F::kNomicBert,  T::kClassifier,        K::kWordPiece, kRemoteCode},
    {"nomic-bert-tiny-embed",      F::kNomicBert,  T::kEmbedder,          K::kWordPiece, kRemoteCode},
    {"nomic-bert-tiny-ntk",        F::kNomicBert,  T::kEmbedder,          K::kWordPiece, kRemoteCode},
    {"nomic-bert-tiny-ner",        F::kNomicBert,  T::kTokenClassifier,   K::kWordPiece, kRemoteCode},
    {"nomic-bert-tiny-qa",         F::kNomicBert,  T::kQuestionAnswering, K::kWordPiece, kRemoteCode},

    {"gte-tiny-nli",               F::kGte,        T::kClassifier,        K::kWordPiece,     kRemoteCode | kInt8Refused},
    {"gte-tiny-rerank",            F::kGte,        T::kReranker,          K::kSentencePiece, kRemoteCode | kInt8Refused},
    {"gte-tiny-embed",             F::kGte,        T::kEmbedder,          K::kWordPiece,     kRemoteCode},
    {"gte-tiny-ner",               F::kGte,        T::kTokenClassifier,   K::kSentencePiece, kRemoteCode},
    {"gte-tiny-qa",                F::kGte,        T::kQuestionAnswering, K::kWordPiece,     kRemoteCode},
    {"gte-tiny-mlm",               F::kGte,        T::kMaskedLm,          K::kSentencePiece, kRemoteCode | kFillMaskGolden},

    // GLiNER: model_type is the backbone's (encoder_config in gliner_config.json).
    {"gliner-tiny-markerv0",       F::kGliner,     T::kExtractor,         K::kSentencePiece},
    {"gliner-tiny-marker",         F::kGliner,     T::kExtractor,         K::kSentencePiece},
    // clang-format on
};

}  // namespace

std::string Fixture::dir() const { return fixture_model(std::string(name)); }

std::span<const Fixture> fixture_catalogue() { return kCatalogue; }

std::vector<std::string> fixtures_where(const std::function<bool(const Fixture&)>& keep) {
  std::vector<std::string> out;
  for (const Fixture& fixture : kCatalogue) {
    if (keep(fixture)) out.emplace_back(fixture.name);
  }
  return out;
}

std::vector<std::string> fixtures_with_task(std::initializer_list<FixtureTask> tasks) {
  return fixtures_where([&](const Fixture& fixture) {
    return !fixture.has(kSentenceTransformers) &&
           std::find(tasks.begin(), tasks.end(), fixture.task) != tasks.end();
  });
}

const Fixture& fixture_named(std::string_view name) {
  for (const Fixture& fixture : kCatalogue) {
    if (fixture.name == name) return fixture;
  }
  throw std::out_of_range("no fixture " + std::string(name) +
                          " in tests/support/fixture_catalogue.cpp");
}

std::string_view golden_task_name(FixtureTask task) {
  switch (task) {
    case FixtureTask::kClassifier:
      return "nli";
    case FixtureTask::kReranker:
      return "rerank";
    case FixtureTask::kEmbedder:
      return "embedding";
    case FixtureTask::kTokenClassifier:
      return "token_classification";
    case FixtureTask::kQuestionAnswering:
      return "question_answering";
    case FixtureTask::kSplade:
    case FixtureTask::kMaskedLm:
      return "sparse_embedding";
    case FixtureTask::kExtractor:
      return "extract";
  }
  return "";
}

std::string fixture_test_name(std::string_view name) {
  std::string out(name);
  std::replace(out.begin(), out.end(), '-', '_');
  return out;
}

}  // namespace onepass::testing

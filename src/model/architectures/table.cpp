// The supported architectures, one line per family prefix: a class name is the prefix followed
// by "Model", "ForSequenceClassification", "ForTokenClassification", and "ForMaskedLM" and
// "ForQuestionAnswering" where the line says so. A new architecture is its folder here and its line
// below (docs/architecture.md).
#include <algorithm>
#include <vector>

#include "model/architectures/architectures.h"

namespace onepass::model {
namespace {

struct TableLine {
  const char* prefix;  // transformers' class-name prefix
  const ArchitectureFamily* family;
  bool roberta_code = false;             // see Architecture
  bool positions_after_padding = false;  // see Architecture; implied by roberta_code
  bool masked_lm = false;                // <Prefix>ForMaskedLM loads too (fill-mask, SPLADE)
  bool question_answering = true;        // <Prefix>ForQuestionAnswering loads too
};

constexpr TableLine kTable[] = {
    // clang-format off
    //  prefix      family             roberta_code  positions_after_padding  masked_lm  question_answering
    {"Bert",       &kBertFamily,       false,        false,                   true},
    {"Roberta",    &kBertFamily,       true,         false,                   true},
    {"XLMRoberta", &kBertFamily,       true,         false,                   true},
    {"Camembert",  &kBertFamily,       true,         false,                   true},
    {"Deberta",    &kDebertaFamily,    false,        false,                   true},
    {"DebertaV2",  &kDebertaV2Family,  false,        false,                   true},
    {"DistilBert", &kDistilBertFamily, false,        false,                   true},
    {"Electra",    &kElectraFamily,    false,        false,                   true},
    {"MPNet",      &kMpnetFamily,      false,        true,                    true},
    // transformers 4.48, the last release on torch 1.x (which makes this project's goldens),
    // has no ModernBertForQuestionAnswering.
    {"ModernBert", &kModernBertFamily, false,        false,                   true,      false},
    // Remote code on the Hub (nomic-ai/nomic-bert-2048), its class names.
    {"NomicBert",  &kNomicBertFamily},
    // Remote code on the Hub (Alibaba-NLP/new-impl: GTE v1.5 and multilingual), its class names.
    {"New",        &kGteFamily,        false,        false,                   true},
    // clang-format on
};

struct HeadSuffix {
  const char* suffix;
  HeadKind head;
};

constexpr HeadSuffix kHeads[] = {
    {"Model", HeadKind::kBaseModel},
    {"ForSequenceClassification", HeadKind::kSequenceClassification},
    {"ForTokenClassification", HeadKind::kTokenClassification},
    {"ForMaskedLM", HeadKind::kMaskedLm},
    {"ForQuestionAnswering", HeadKind::kQuestionAnswering},
};

const std::vector<Architecture>& all_architectures() {
  static const std::vector<Architecture> all = [] {
    std::vector<Architecture> out;
    for (const auto& line : kTable) {
      for (const auto& head : kHeads) {
        if (head.head == HeadKind::kMaskedLm && !line.masked_lm) continue;
        if (head.head == HeadKind::kQuestionAnswering && !line.question_answering) continue;
        out.push_back({std::string(line.prefix) + head.suffix, line.family, head.head,
                       line.roberta_code, line.roberta_code || line.positions_after_padding});
      }
    }
    return out;
  }();
  return all;
}

}  // namespace

std::span<const Architecture> architecture_table() { return all_architectures(); }

const Architecture* find_architecture(std::string_view name) {
  const auto& all = all_architectures();
  const auto it =
      std::find_if(all.begin(), all.end(), [&](const Architecture& a) { return name == a.name; });
  return it == all.end() ? nullptr : &*it;
}

}  // namespace onepass::model

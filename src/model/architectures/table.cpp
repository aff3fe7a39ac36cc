// The supported architectures, one line each. A new architecture is its own file(s) in this
// folder, its loader declared in architectures.h, and its lines here (docs/architecture.md).
#include <algorithm>

#include "model/architectures/architectures.h"

namespace onepass::model {
namespace {

constexpr HeadKind kBase = HeadKind::kBaseModel;
constexpr HeadKind kSequence = HeadKind::kSequenceClassification;
constexpr HeadKind kToken = HeadKind::kTokenClassification;

constexpr Architecture kTable[] = {
    // clang-format off
    {"BertModel",                           &load_bert,        kBase},
    {"BertForSequenceClassification",       &load_bert,        kSequence},
    {"BertForTokenClassification",          &load_bert,        kToken},
    {"RobertaModel",                        &load_bert,        kBase,     true},
    {"RobertaForSequenceClassification",    &load_bert,        kSequence, true},
    {"RobertaForTokenClassification",       &load_bert,        kToken,    true},
    {"XLMRobertaModel",                     &load_bert,        kBase,     true},
    {"XLMRobertaForSequenceClassification", &load_bert,        kSequence, true},
    {"XLMRobertaForTokenClassification",    &load_bert,        kToken,    true},
    {"DebertaV2Model",                      &load_deberta_v2,  kBase},
    {"DebertaV2ForSequenceClassification",  &load_deberta_v2,  kSequence},
    {"DebertaV2ForTokenClassification",     &load_deberta_v2,  kToken},
    {"DistilBertModel",                     &load_distilbert,  kBase},
    {"DistilBertForSequenceClassification", &load_distilbert,  kSequence},
    {"DistilBertForTokenClassification",    &load_distilbert,  kToken},
    {"ElectraModel",                        &load_electra,     kBase},
    {"ElectraForSequenceClassification",    &load_electra,     kSequence},
    {"ElectraForTokenClassification",       &load_electra,     kToken},
    // clang-format on
};

}  // namespace

std::span<const Architecture> architecture_table() { return kTable; }

const Architecture* find_architecture(std::string_view name) {
  const auto it = std::find_if(std::begin(kTable), std::end(kTable),
                               [&](const Architecture& a) { return name == a.name; });
  return it == std::end(kTable) ? nullptr : &*it;
}

}  // namespace onepass::model

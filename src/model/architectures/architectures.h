// The list of supported architectures: one Architecture line per config.json "architectures"
// name (architectures/table.cpp), and one loader per architecture family, declared here and
// defined in the family's own file(s) below src/model/architectures/. load_encoder, the runtime's
// model description, `onepass info` and the tests all read this one table.
#pragma once

#include <memory>
#include <span>
#include <string_view>

#include "model/encoder.h"
#include "weights/config.h"
#include "weights/weight_store.h"

namespace onepass::model {

using Loader = std::unique_ptr<Encoder> (*)(const weights::ModelConfig&, weights::WeightStore,
                                            const LoadOptions&);

struct Architecture {
  const char* name;  // config.json "architectures"[0], e.g. "BertForSequenceClassification"
  Loader loader;
  HeadKind head;
  // RoBERTa and XLM-R number positions from pad_token_id + 1 (transformers'
  // create_position_ids_from_input_ids), so pad_token_id + 1 rows of the position table are
  // never used by a real token.
  bool positions_after_padding = false;
};

// Every supported architecture, in the order `onepass info` lists them.
std::span<const Architecture> architecture_table();

// The table's line for `name`; null when it is not supported.
const Architecture* find_architecture(std::string_view name);

// BertModel, RobertaModel, XLMRobertaModel and their *ForSequenceClassification and
// *ForTokenClassification heads (architectures/bert.cpp).
std::unique_ptr<Encoder> load_bert(const weights::ModelConfig& config, weights::WeightStore store,
                                   const LoadOptions& options);

// DeBERTa-v2 / v3 (mDeBERTa-v3 among them): DebertaV2Model and its sequence- and
// token-classification heads (architectures/deberta_v2*.cpp). Besides the shared errors, throws
// kUnsupported for a configuration transformers itself cannot run (an even conv_kernel_size) or
// an activation the kernels lack.
std::unique_ptr<Encoder> load_deberta_v2(const weights::ModelConfig& config,
                                         weights::WeightStore store, const LoadOptions& options);

// DistilBertModel, DistilBertForSequenceClassification, DistilBertForTokenClassification
// (architectures/distilbert.cpp).
std::unique_ptr<Encoder> load_distilbert(const weights::ModelConfig& config,
                                         weights::WeightStore store, const LoadOptions& options);

// ElectraModel, ElectraForSequenceClassification, ElectraForTokenClassification
// (architectures/electra.cpp).
std::unique_ptr<Encoder> load_electra(const weights::ModelConfig& config,
                                      weights::WeightStore store, const LoadOptions& options);

}  // namespace onepass::model

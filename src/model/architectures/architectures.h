// One loader per architecture file; load_encoder.cpp dispatches on config.json "architectures".
#pragma once

#include <filesystem>
#include <memory>

#include "model/encoder.h"
#include "weights/config.h"
#include "weights/weight_store.h"

namespace onepass::model {

// BertModel, RobertaModel, XLMRobertaModel and their *ForSequenceClassification and
// *ForTokenClassification heads (architectures/bert.cpp).
std::unique_ptr<Encoder> load_bert(const weights::ModelConfig& config, weights::WeightStore store,
                                   const LoadOptions& options);

// DistilBertModel, DistilBertForSequenceClassification, DistilBertForTokenClassification
// (architectures/distilbert.cpp).
std::unique_ptr<Encoder> load_distilbert(const weights::ModelConfig& config,
                                         weights::WeightStore store, const LoadOptions& options);

// ElectraModel, ElectraForSequenceClassification, ElectraForTokenClassification
// (architectures/electra.cpp).
std::unique_ptr<Encoder> load_electra(const weights::ModelConfig& config,
                                      weights::WeightStore store, const LoadOptions& options);

}  // namespace onepass::model

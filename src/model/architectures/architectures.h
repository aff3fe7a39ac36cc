// The supported architectures: one folder per family below src/model/architectures/ (its config
// struct, its loader, its forward pass) and one line for it in table.cpp. load_encoder, the
// runtime's model description, `onepass info` and the tests all read that one table.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "model/encoder.h"
#include "weights/config.h"
#include "weights/weight_store.h"

namespace onepass::model {

// One architecture family: what its folder gives the table.
struct ArchitectureFamily {
  // Sets the family's config-class defaults on `config` (which holds the PretrainedConfig
  // fields) and reads the encoder sizes and the family's own fields from config.fields; throws
  // kInvalidModel for a field of the family's own that is impossible, so that a broken config is
  // refused before load as well as at it.
  void (*read_config)(weights::ModelConfig& config);
  // Builds the encoder from the config read_config filled in and the opened weights.
  std::unique_ptr<Encoder> (*load)(const weights::ModelConfig& config, weights::WeightStore store,
                                   const LoadOptions& options);
};

// ArchitectureFamily::load for a family whose encoder class is built from its own config class
// (`to_config`: the shared config read as the family's, e.g. bert_config), the weights and the
// options, as every family's is.
template <typename EncoderClass, auto to_config>
std::unique_ptr<Encoder> load_family_encoder(const weights::ModelConfig& config,
                                             weights::WeightStore store,
                                             const LoadOptions& options) {
  return std::make_unique<EncoderClass>(to_config(config), std::move(store), options);
}

// The shared config as it is, for a family with no config class of its own (DistilBERT).
inline const weights::ModelConfig& shared_config(const weights::ModelConfig& config) {
  return config;
}

// A class name config.json's "architectures" can hold, e.g. "BertForSequenceClassification".
struct Architecture {
  std::string name;
  const ArchitectureFamily* family = nullptr;
  HeadKind head = HeadKind::kBaseModel;
  // Runs RoBERTa's modeling code: transformers' RobertaModel and the classes it copies from it
  // (XLMRobertaModel, CamembertModel, ...). That means: positions numbered from pad_token_id + 1
  // (create_position_ids_from_input_ids), so pad_token_id + 1 rows of the position table are
  // never used by a real token; a config class whose pad_token_id defaults to 1; task
  // checkpoints that nest the encoder under "roberta."; and RobertaClassificationHead (dense,
  // tanh, out_proj on the first token) in place of BERT's pooler + classifier.
  bool roberta_code = false;
  // Positions numbered from pad_token_id + 1, so that pad_token_id + 1 rows of the position table
  // are never used by a real token (describe_checkpoint takes them off max_tokens): RoBERTa's
  // code and MPNet's.
  bool positions_after_padding = false;
};

// Every supported class name, in the order `onepass info` lists them: for each line of the table,
// <Prefix>Model, <Prefix>ForSequenceClassification, <Prefix>ForTokenClassification, and where the
// line has them <Prefix>ForMaskedLM and <Prefix>ForQuestionAnswering.
std::span<const Architecture> architecture_table();

// The table's entry for `name`; null when it is not supported.
const Architecture* find_architecture(std::string_view name);

// A parsed config.json (its PretrainedConfig fields) read on as its architecture's family reads
// it, sizes checked: read_model_config's second half, for a config found elsewhere (GLiNER's
// encoder_config). Throws as read_model_config.
weights::ModelConfig complete_model_config(weights::ModelConfig config);

// The families, each defined in its own folder.
extern const ArchitectureFamily kBertFamily;        // bert/: BERT, RoBERTa, XLM-R, CamemBERT
extern const ArchitectureFamily kDebertaFamily;     // deberta/: DeBERTa (v1), on deberta_v2/
extern const ArchitectureFamily kDebertaV2Family;   // deberta_v2/: DeBERTa-v2 / v3
extern const ArchitectureFamily kDistilBertFamily;  // distilbert/
extern const ArchitectureFamily kElectraFamily;     // electra/
extern const ArchitectureFamily kMpnetFamily;       // mpnet/
extern const ArchitectureFamily kModernBertFamily;  // modernbert/
extern const ArchitectureFamily kNomicBertFamily;   // nomic_bert/
extern const ArchitectureFamily kGteFamily;         // gte/: Alibaba-NLP's GTE ("New*" classes)

}  // namespace onepass::model

// The accuracy gate for reduced precision (docs/reliability.md): a model loaded in bf16 or int8 is
// compared with the same checkpoint in fp32 on a set of inputs, and refused in that precision
// when it misses the bar. Dynamic int8 is known to collapse some models into one class (ONNX
// Runtime users met it); the class-share check exists for that.
//
// Bar: label agreement >= 99% (classifiers; for a single-logit scorer, the share of input pairs
// both precisions rank the same way, and every query's documents in the same order), no class's
// predicted share moving by more than 10 points, zero NaN/Inf in the candidate's outputs; base
// models (embeddings): every mean-pooled embedding at cosine >= 0.99 to its fp32 twin and the
// nearest neighbour of >= 99% of the inputs the same; token classifiers: every input's token
// logits, one vector, at cosine >= 0.99 and >= 99% of the tokens' labels the same; question
// answering: the same cosine and >= 99% of the inputs' best spans the same; GLiNER (span
// extraction): every input's span logits, one vector, at cosine >= 0.99 and >= 99% of the
// entities, (first word, last word, label) with a score past GLiNER's 0.5 threshold in either
// precision, found by both.
//
// The inputs are token ids: callers tokenize (the model module does not depend on the tokenizer
// module). builtin_check_texts() is the default multilingual set; synthetic_check_inputs() stands
// in when a folder has no tokenizer.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "kernels/matmul.h"
#include "model/encoder.h"

namespace onepass::model {

struct CheckExample {
  std::vector<std::int32_t> input_ids;
  std::vector<std::int32_t> token_type_ids;  // may be empty
  int label = -1;                            // class id from a labelled set; -1: unlabelled
  // Pairs that share their first text (a query and its documents, a premise and its hypotheses)
  // share a query id, for the rerankers' per-query rank agreement; -1: not part of a query.
  int query = -1;
  // GLiNER (kSpanExtraction): the token index of each word's first sub-token in the prompt
  // sequence (runtime/extract.h builds both); empty for every other head.
  std::vector<std::int32_t> word_positions;
};

struct CheckText {
  const char* language;  // BCP-47 tag, for the report only
  const char* text;
  const char* pair;  // null for a single text
};

// About fifty short texts and NLI-style pairs in twenty-odd languages and scripts.
std::span<const CheckText> builtin_check_texts();

// The texts through the model's tokenizer (pairs as pairs).
std::vector<CheckExample> tokenize_check_texts(const TextTokenizer& tokenize,
                                               std::span<const CheckText> texts);

// Deterministic pseudo-random ids in [first_id, vocab_size): 8 to 64 tokens each.
std::vector<CheckExample> synthetic_check_inputs(const ModelInfo& info, std::size_t count,
                                                 std::int32_t first_id = 5);

struct PrecisionReport {
  Precision precision = Precision::kFp32;
  std::size_t examples = 0;
  bool classifier = false;
  int num_labels = 0;
  // Classifiers: argmax (multi-label: every sigmoid decision) equal in both; scorers: pair order.
  double label_agreement = 1.0;
  std::vector<double> reference_share;  // per class, fraction of examples predicted as it
  std::vector<double> candidate_share;
  double max_share_shift = 0.0;  // largest |reference_share - candidate_share|, a fraction
  // Single-label classifiers: among the examples whose label flipped, the widest fp32 margin
  // (top logit minus runner-up). Tells a flip at a near-tie from a real disagreement; 0 if none.
  double widest_flipped_margin = 0.0;
  double max_abs_logit_diff = 0.0;  // logits (classifiers) or embedding values (base models)
  double mean_abs_logit_diff = 0.0;
  double min_cosine = 1.0;  // per example: logit vectors (classifiers), mean-pooled embeddings
  double mean_cosine = 1.0;
  // Per task (1.0 where it does not apply; each counts a flip only where fp32 itself does not
  // call it a tie: closer than 2% of the spread of the scores the answer was picked from):
  // embedders (base models): share of inputs whose nearest neighbour among the others is the same;
  double neighbour_agreement = 1.0;
  // token classifiers: share of tokens whose label is the same (entities are built from them);
  double token_agreement = 1.0;
  // question answering: share of inputs whose best answer span is the same;
  double span_agreement = 1.0;
  // GLiNER: share of the entities, (first word, last word, label) scored past 0.5 in either
  // precision, that both find (an entity whose fp32 logit is a tie with the threshold may flip);
  double entity_agreement = 1.0;
  // rerankers: share of queries (CheckExample::query with two documents or more) whose
  // documents keep their order.
  double query_agreement = 1.0;
  std::size_t queries = 0;
  std::size_t non_finite = 0;  // NaN/Inf values in the candidate's outputs (and the reference's)
  std::optional<double> reference_accuracy;  // labelled sets only
  std::optional<double> candidate_accuracy;
  bool pass = true;
  std::vector<std::string> failures;  // one sentence per criterion missed
};

// Runs both encoders over `examples` in batches of `batch_size` and scores the candidate against
// the reference. Throws onepass::Error(kInvalidInput) when an example does not fit the model
// (forward's own checks) and kInvalidArgument for an empty set or a label outside num_labels.
PrecisionReport compare_precisions(const Encoder& reference, const Encoder& candidate,
                                   std::span<const CheckExample> examples,
                                   Precision candidate_precision, std::size_t batch_size = 16);

// "label agreement 97.9% < 99%; ..." for error messages.
std::string summarize_failures(const PrecisionReport& report);

// load_encoder's gate for options.precision != kFp32 without force_precision: loads the fp32
// twin of `candidate` from `model_dir`, compares them on the built-in set (tokenized with
// options.check_tokenizer, else synthetic ids) and throws onepass::Error(kInvalidModel) naming the
// precision, the criteria missed and --force-precision when the candidate fails.
void enforce_precision_gate(const Encoder& candidate, const std::filesystem::path& model_dir,
                            const LoadOptions& options);

// Throws onepass::Error(kUnsupported) naming the missing CPU feature when this CPU cannot run
// `precision` (bf16 without AVX512_BF16 or AMX), detected at run time. load_encoder calls it
// before reading any weight; the CLI calls it on --precision before anything else.
void require_cpu_support(Precision precision);

}  // namespace onepass::model

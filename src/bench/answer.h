// What an endpoint answered for one input, in a dialect-free form, and how two answers are
// compared: by the content verification (same endpoint, batched vs single) and by the agreement
// between endpoints in compare mode.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "bench/task.h"

namespace onepass::bench {

struct Answer {
  // Classification: the top label and its score (probability). Empty label for embeddings.
  // Token classification: every entity's group and span in text order ("entities: PER[0,3)
  // LOC[10,15)", never empty), the entities' scores in `values` and their mean in `score`.
  // Question answering: the answer's span ("answer[12,18)") and its score.
  std::string label;
  double score = 0;
  // Embeddings: the vector (token-level answers flattened). Sparse embeddings: the vector, dense
  // up to its last non-zero entry (so two answers with other entries differ in size).
  // Classification: the scores of every label when the dialect returns them, in a fixed order per
  // dialect (by label name or index).
  std::vector<float> values;
  // False when the label is only an index ("LABEL_2": logits without id2label), which says
  // nothing about the dataset's label names, so accuracy skips it.
  bool label_named = true;
};

// True when `got` is the same answer as `expected` up to `tolerance`, absolute for values within
// [-1, 1] and relative above (batched kernels may round differently, never by 1e-3).
bool same_answer(const Answer& got, const Answer& expected, double tolerance);

// Agreement between two deployments of a model: the same top label for classifiers; cosine
// similarity >= 1 - tolerance for embeddings of the same size.
bool answers_agree(const Answer& a, const Answer& b, double tolerance);

// Labels compare case-insensitively ("ENTAILMENT" from one server, "entailment" in a dataset).
bool same_label(std::string_view a, std::string_view b);

}  // namespace onepass::bench

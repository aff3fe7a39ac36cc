// Logits into scores and ranked labels, as the Hugging Face text-classification pipeline and
// TEI compute them: the engine's own rules (model/heads/postprocess.h), named here for the
// dialects, so every dialect, the runtime's task logic and `onepass run` agree.
#pragma once

#include "model/heads/postprocess.h"

namespace onepass::api {

using model::heads::apply_score_function;
using model::heads::label_name;
using model::heads::rank;
using model::heads::RankedLabel;
using model::heads::ScoreFunction;
using model::heads::sigmoid;
using model::heads::softmax;

}  // namespace onepass::api

// GLiNER's own server's route (gliner.serve), POST /extract: {"text", "labels", "threshold",
// "flat_ner", "multi_label"} answered {"entities": [{"start", "end", "text", "label", "score"}]},
// so that its clients move unchanged; "text" may also be a list (a list of answers).
#pragma once

#include "api/common/call.h"
#include "api/common/dialect.h"

namespace onepass::api::gliner {

void handle_extract(Call& call);

extern const DialectSpec kDialect;

}  // namespace onepass::api::gliner

// Zero-shot classification's JSON, shared by the toolkit payload (parameters.candidate_labels)
// and TEI's /zero_shot extension: reading the labels, template and multi_label, the admission
// checks, and writing an answer. The task itself (the premise/hypothesis inputs and their
// scores) is runtime/zero_shot.h.
#pragma once

#include <string>
#include <vector>

#include "api/common/json_request.h"
#include "api/common/json_writer.h"
#include "runtime/service.h"
#include "runtime/zero_shot.h"

namespace onepass::api {

using runtime::expand_zero_shot;
using runtime::score_zero_shot;
using runtime::ZeroShotAnswer;
using runtime::ZeroShotSpec;

// candidate_labels: a list of strings or one comma-separated string; the template must hold
// "{}". Throws ApiError kValidation.
ZeroShotSpec parse_zero_shot(const Json* candidate_labels, const Json* hypothesis_template,
                             const Json* multi_label);

// Throws ApiError kValidation unless `model` is a classifier with an entailment label.
void require_zero_shot_model(const runtime::ModelDescription& model);

// Before expand_zero_shot, which copies every sequence once per label: each sequence, label and
// the template within the model's per-text byte cap (422), and at most `max_labels` labels (the
// client batch limit; 422 kTooManyInputs), so one request's expansion stays bounded.
void check_zero_shot_inputs(const std::vector<std::string>& sequences, const ZeroShotSpec& spec,
                            const runtime::ModelDescription& model, std::size_t max_labels);

void write_zero_shot(JsonWriter& json, const ZeroShotAnswer& answer);

}  // namespace onepass::api

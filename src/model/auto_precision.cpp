#include "model/auto_precision.h"

#include <algorithm>
#include <cstdio>

#include "base/error.h"
#include "kernels/matmul.h"

namespace onepass::model {

PrecisionMode precision_mode_from_name(const std::string& name) {
  if (name == "auto") return {true, Precision::kFp32};
  try {
    return {false, kernels::precision_from_name(name)};
  } catch (const Error&) {
    throw Error(ErrorKind::kInvalidArgument,
                "unknown precision '" + name.substr(0, 32) + "' (fp32, bf16, int8 or auto)");
  }
}

std::string precision_mode_name(PrecisionMode mode) {
  return mode.automatic ? "auto" : kernels::precision_name(mode.fixed);
}

GateResult gate_result(const PrecisionReport& report) {
  GateResult g;
  g.precision = report.precision;
  g.pass = report.pass;
  g.reason = report.pass ? "" : summarize_failures(report);
  g.examples = report.examples;
  // The figure of the model's own task: labels (classifiers), neighbours (embedders), token
  // labels, answer spans, query order or entities; each is 1 where it does not apply.
  g.label_agreement =
      std::min({report.label_agreement, report.neighbour_agreement, report.token_agreement,
                report.span_agreement, report.query_agreement, report.entity_agreement});
  g.max_share_shift = report.max_share_shift;
  g.min_cosine = report.min_cosine;
  return g;
}

std::string describe_verdict(const PrecisionVerdict& verdict) {
  std::string out;
  for (const auto& g : verdict.gates) {
    if (!out.empty()) out += "; ";
    out += kernels::precision_name(g.precision);
    if (g.unsupported) {
      out += " not run (" + g.reason + ")";
      continue;
    }
    char figures[160];
    std::snprintf(figures, sizeof figures,
                  "%zu inputs, agreement %.1f%%, share shift %.1f%%, min cosine %.4f", g.examples,
                  100.0 * g.label_agreement, 100.0 * g.max_share_shift, g.min_cosine);
    out += g.pass ? std::string(" passed (") + figures + ")"
                  : " refused (" + g.reason + "; " + figures + ")";
  }
  if (out.empty()) out = "no reduced precision tried";
  return std::string("serving ") + kernels::precision_name(verdict.chosen) + ": " + out;
}

AutoPrecisionLoad load_auto_precision(const EncoderLoader& load, const LoadOptions& options,
                                      std::span<const CheckExample> examples) {
  LoadOptions fp32 = options;
  fp32.precision = Precision::kFp32;
  fp32.force_precision = true;
  AutoPrecisionLoad out;
  out.encoder = load(fp32);
  ONEPASS_CHECK(out.encoder != nullptr, "the loader returns an encoder");
  std::vector<CheckExample> synthetic;
  if (examples.empty()) {
    synthetic = synthetic_check_inputs(out.encoder->info(), builtin_check_texts().size());
    examples = synthetic;
  }
  for (const Precision precision : kAutoCandidates) {
    const char* unsupported = kernels::precision_unsupported_reason(precision);
    if (*unsupported != '\0') {
      GateResult g;
      g.precision = precision;
      g.unsupported = true;
      g.reason = unsupported;
      out.verdict.gates.push_back(std::move(g));
      continue;
    }
    LoadOptions reduced = fp32;
    reduced.precision = precision;
    std::unique_ptr<Encoder> candidate;
    try {
      candidate = load(reduced);
    } catch (const Error& e) {
      // A model that runs in fp32 only (GLiNER) refuses the reduced precision by name: auto
      // records why and serves what it can, as for a CPU without the instructions.
      if (e.kind() != ErrorKind::kUnsupported) throw;
      GateResult g;
      g.precision = precision;
      g.unsupported = true;
      g.reason = e.what();
      out.verdict.gates.push_back(std::move(g));
      continue;
    }
    ONEPASS_CHECK(candidate != nullptr, "the loader returns an encoder");
    const auto report = compare_precisions(*out.encoder, *candidate, examples, precision);
    out.verdict.gates.push_back(gate_result(report));
    if (report.pass) {
      out.verdict.chosen = precision;
      out.encoder = std::move(candidate);
      return out;
    }
  }
  out.verdict.chosen = Precision::kFp32;
  return out;
}

}  // namespace onepass::model

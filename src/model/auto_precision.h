// `--precision auto`: serve the fastest precision that proves itself on this model. The gate of
// precision_check.h runs for each faster precision in turn (int8, then bf16) against the model's
// fp32 twin; the first that passes is served, fp32 when none does. The verdict (what was chosen,
// each candidate's figures and why it was refused) is a plain value, so the runtime can log it,
// report it and cache it (runtime/precision_verdicts.h), and a later start with the same weights,
// onepass version and CPU can load the chosen precision without running the gate again.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "model/encoder.h"
#include "model/precision_check.h"

namespace onepass::model {

// What an operator asks for: one precision, or auto.
struct PrecisionMode {
  bool automatic = false;
  Precision fixed = Precision::kFp32;  // when not automatic
};

// "auto", or one of precision_from_name's names; throws onepass::Error(kInvalidArgument) naming
// the value and the choices otherwise.
PrecisionMode precision_mode_from_name(const std::string& name);
std::string precision_mode_name(PrecisionMode mode);

// The order auto tries the reduced precisions in: fastest first (docs/performance.md: int8 about
// 3x, bf16 about 1.85x the fp32 samples/s on mDeBERTa-base).
inline constexpr Precision kAutoCandidates[] = {Precision::kInt8, Precision::kBf16};

// One candidate auto tried.
struct GateResult {
  Precision precision = Precision::kFp32;
  bool pass = false;
  bool unsupported = false;  // not run: this CPU cannot run it (reason names the feature)
  std::string reason;        // why it was refused; empty when it passed
  std::size_t examples = 0;
  double label_agreement = 1.0;  // the task's agreement (gate_result): labels, entities, ...
  double max_share_shift = 0.0;
  double min_cosine = 1.0;
};

struct PrecisionVerdict {
  Precision chosen = Precision::kFp32;
  std::vector<GateResult> gates;  // in the order tried; stops at the first that passed
};

// One line for logs and /info: "int8 refused (label agreement 40.0% < 99%); bf16 passed (...)".
std::string describe_verdict(const PrecisionVerdict& verdict);

// GateResult of one report.
GateResult gate_result(const PrecisionReport& report);

// Loads the model in `options` (threads, ...; precision and force_precision are set here).
using EncoderLoader = std::function<std::unique_ptr<Encoder>(const LoadOptions& options)>;

struct AutoPrecisionLoad {
  std::unique_ptr<Encoder> encoder;  // in verdict.chosen
  PrecisionVerdict verdict;
};

// Loads the fp32 reference, then each of kAutoCandidates this CPU runs, compared with it on
// `examples` (precision_check.h's bar); returns the first that passes, else the fp32 reference.
// `examples` empty: synthetic ids (synthetic_check_inputs). Throws what the loader throws.
AutoPrecisionLoad load_auto_precision(const EncoderLoader& load, const LoadOptions& options,
                                      std::span<const CheckExample> examples);

}  // namespace onepass::model

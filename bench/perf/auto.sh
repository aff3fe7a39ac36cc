#!/usr/bin/env bash
# Issue 42, item 5: what `--precision auto` costs and buys on the perf shapes, in one run.
# For each MODEL:
#   gate    `onepass check --save-verdict` into a fresh --state-dir (the gate without a saved
#           verdict: an fp32 load, a load per candidate tried, two passes over the check texts);
#           its report holds what auto chose and each candidate's figures and refusal
#   starts  `serve` start to first answer (bench/perf/startup.sh): fp32, auto from the saved
#           verdict, and auto with an empty --state-dir (the gate at load; one start)
#   speed   bench/perf/compare.mjs --precisions auto: onepass fp32, onepass auto (the chosen
#           precision, read from the same --state-dir) and ONNX Runtime fp32 on the same batches
# and prints one markdown table (also OUT/auto.md; the raw JSON beside it).
#
#   bench/perf/auto.sh [MODEL ...]   (default: the four shapes of ../shared/perf-models)
# Environment: THREADS (default 2), RUNS (timed batches per workload, default 10), STARTS (timed
# starts per kind, default 3), ONLY (workloads, default 1x59,1x512,mixed32,8x512), OUT (default
# bench/out/auto). Weights, the ONNX Runtime peer and the build come from run.sh (PREPARE_ONLY=1).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:-$root/bench/out/auto}
threads=${THREADS:-2}
starts=${STARTS:-3}
bin=$root/build/release/apps/onepass/onepass
models=("$@")
if [ ${#models[@]} -eq 0 ]; then
  models=(mdeberta-v3-base-shaped bert-base-shaped minilm-l12-h384-multilingual-shaped xlmr-base-shaped)
fi
PREPARE_ONLY=1 "$root/bench/perf/run.sh" "${models[@]}"
mkdir -p "$out"
max_threads=$(tr ',' '\n' <<<"$threads" | sort -n | tail -1)

for m in "${models[@]}"; do
  dir=$root/bench/out/perf/$m
  state=$out/state-$m
  rm -rf "$state" "$out/state-$m-empty"
  cat "$dir"/*.safetensors >/dev/null  # the same warm page cache for every timed step
  echo "== $m: gate (check --save-verdict)" >&2
  t0=$(date +%s.%N)
  "$bin" check --model "$dir" --save-verdict --state-dir "$state" --threads "$max_threads" \
    >"$out/$m.check.json"
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "{\"wall_s\": %.3f}\n", b - a }' >"$out/$m.check-wall.json"
  echo "== $m: starts" >&2
  THREADS=$max_threads "$root/bench/perf/startup.sh" "$dir" "$starts" >"$out/$m.start-fp32.json"
  THREADS=$max_threads SERVE_ARGS="--precision auto --state-dir $state" \
    "$root/bench/perf/startup.sh" "$dir" "$starts" >"$out/$m.start-cached.json"
  THREADS=$max_threads SERVE_ARGS="--precision auto --state-dir $out/state-$m-empty" \
    "$root/bench/perf/startup.sh" "$dir" 1 >"$out/$m.start-gate.json"
  rm -rf "$out/state-$m-empty"
  echo "== $m: speed" >&2
  node "$root/bench/perf/compare.mjs" --model "$dir" --onepass "$bin" --ort-from "$root/bench/.peer" \
    --threads "$threads" --runs "${RUNS:-10}" --only "${ONLY:-1x59,1x512,mixed32,8x512}" \
    --precisions auto --state-dir "$state" --out "$out/perf-$m.json" >&2
done
node "$root/bench/perf/auto_table.mjs" "$out" "${models[@]}" | tee "$out/auto.md"

#!/usr/bin/env bash
# Latency by request rate (issue 14): `onepass serve` on one model, `onepass bench` sending one
# NLI pair per request back to back and then at fixed intervals (--burstiness inf), and the p50
# of each rate against the back-to-back p50. Prints one Markdown table row per rate.
# Back to back runs first and again last; the lower of its two p50s is the base, so that a
# passing disturbance of the shared host during one of them cannot make the gaps look cheaper.
# A rate whose interval is shorter than that p50 is beyond what the server can do one request at
# a time; its row says so (requests queue there whatever the server does between them).
# The last columns time the engine alone (`onepass run --bench --idle-ms`, no server, no HTTP)
# on the same pair after the same idle gap, against its own back-to-back p50: what the gap costs
# the forward pass itself, which the server cannot be faster than.
#
#   bench/perf/rates.sh MODEL_DIR [THREADS]       (default threads: 2)
# Environment: RATES (default "20 10 5 2"), N (requests per rate, default 40),
# SERVE_ARGS (extra `onepass serve` flags, e.g. "--pin-threads false").
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
model=${1:?usage: rates.sh MODEL_DIR [THREADS]}
threads=${2:-2}
bin=${ONEPASS_BIN:-$root/build/release/apps/onepass/onepass}
work=$(mktemp -d)
# shellcheck disable=SC2086 # SERVE_ARGS is a list of flags
"$bin" serve --model "m=$model" --port 0 --threads "$threads" ${SERVE_ARGS:-} >"$work/log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true; wait $pid 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 1 600); do grep -q 'listening on' "$work/log" && break; sleep 0.1; done
addr=$(grep -o 'listening on [^ ]*' "$work/log" | cut -d' ' -f3)
for _ in $(seq 1 600); do curl -sf "http://$addr/ping" >/dev/null && break; sleep 0.1; done
head -1 "$root/bench/datasets/nli-multilingual.jsonl" >"$work/pair.jsonl"
measure() {  # RATE -> "p50 p90"
  "$bin" bench --endpoint "http://$addr" --dialect tei --dataset "$work/pair.jsonl" -n "${N:-40}" \
    --warmup 3 --request-rate "$1" --burstiness inf --no-progress -o "$work/r.json" >/dev/null
  node -e '
    const r = require(process.argv[1]).endpoints[0].runs[0].latency_ms;
    console.log(r.p50.toFixed(1), r.p90.toFixed(1));' "$work/r.json"
}
read -r first_p50 first_p90 < <(measure inf)
rows=()
for rate in ${RATES:-20 10 5 2}; do rows+=("$rate $(measure "$rate")"); done
read -r last_p50 last_p90 < <(measure inf)
base=$(node -e "console.log(Math.min($first_p50, $last_p50))")
kill $pid 2>/dev/null || true
wait $pid 2>/dev/null || true

node -e 'const d = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  const line = JSON.stringify({ text: d.text, text_pair: d.text_pair });
  console.log(Array(21).fill(line).join("\n"));' "$work/pair.jsonl" >"$work/engine.jsonl"
engine() {  # IDLE_MS -> p50 of 20 batch-1 forwards, each after IDLE_MS idle
  local idle=()
  [ "$1" = 0 ] || idle=(--idle-ms "$1")
  "$bin" run --model "$model" --input "$work/engine.jsonl" --bench --batch-size 1 \
    --threads "$threads" "${idle[@]}" | node -e '
    let s = ""; process.stdin.on("data", (c) => (s += c));
    process.stdin.on("end", () => console.log(JSON.parse(s).p50_ms.toFixed(2)));'
}
engine_base=$(engine 0)

echo "| request rate | p50 ms | p90 ms | p50 / back-to-back p50 | engine alone after the same idle: p50 ms, / its back-to-back p50 |"
echo "| --- | --- | --- | --- | --- |"
echo "| back to back (first / last) | $first_p50 / $last_p50 | $first_p90 / $last_p90 | base $base | $engine_base |"
for row in "${rows[@]}"; do
  read -r rate p50 p90 <<<"$row"
  note=$(node -e "console.log(1000 / $rate < $base ? ' (beyond capacity: interval < back-to-back p50)' : '')")
  gap_ms=$(node -e "console.log(Math.max(0, Math.round(1000 / $rate - $base)))")
  e=$(engine "$gap_ms")
  echo "| $rate req/s | $p50 | $p90 | $(node -e "console.log(($p50 / $base).toFixed(2))")x$note |" \
    "$e, $(node -e "console.log(($e / $engine_base).toFixed(2))")x after $gap_ms ms |"
done

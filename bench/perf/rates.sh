#!/usr/bin/env bash
# Latency by request rate (issue 14): `onepass serve` on one model, `onepass bench` sending one
# NLI pair per request back to back and then at fixed intervals (--burstiness inf), and the p50
# of each rate against the back-to-back p50. Prints one Markdown table row per rate.
#
#   bench/perf/rates.sh MODEL_DIR [THREADS]       (default threads: 2)
# Environment: RATES (default "inf 20 10 5 2"), N (requests per rate, default 40),
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
echo "| request rate | p50 ms | p90 ms | p50 / back-to-back p50 |"
echo "| --- | --- | --- | --- |"
base=""
for rate in ${RATES:-inf 20 10 5 2}; do
  "$bin" bench --endpoint "http://$addr" --dialect tei --dataset "$work/pair.jsonl" -n "${N:-40}" \
    --warmup 3 --request-rate "$rate" --burstiness inf --no-progress -o "$work/r.json" >/dev/null
  read -r p50 p90 < <(node -e '
    const r = require(process.argv[1]).endpoints[0].runs[0].latency_ms;
    console.log(r.p50.toFixed(1), r.p90.toFixed(1));' "$work/r.json")
  [ -n "$base" ] || base=$p50
  label=$([ "$rate" = inf ] && echo "back to back" || echo "$rate req/s")
  echo "| $label | $p50 | $p90 | $(node -e "console.log((${p50}/${base}).toFixed(2))")x |"
done

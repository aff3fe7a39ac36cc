#!/usr/bin/env bash
# Load test of `onepass serve` with wrk: requests/s and latency percentiles at concurrency
# 1, 8 and 64 against one fixture model (default: the DeBERTa-v2 NLI fixture, the largest).
# Usage: bench/serve/load.sh [MODEL_DIR] [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/../.."
model=${1:-tests/data/fixtures/models/deberta-v2-tiny-nli}
seconds=${2:-10}
bin=build/release/apps/onepass/onepass
work=$(mktemp -d)
"$bin" serve --model "m=$model" --port 0 >"$work/log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 1 100); do grep -q 'listening on' "$work/log" && break; sleep 0.1; done
addr=$(grep -o 'listening on [^ ]*' "$work/log" | cut -d' ' -f3)
for _ in $(seq 1 300); do curl -sf "http://$addr/ping" >/dev/null && break; sleep 0.1; done
cat >"$work/post.lua" <<'LUA'
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"inputs":["A man is playing a guitar on a busy street corner.","Someone is making music outside."]}'
LUA
for c in 1 8 64; do
  echo "== concurrency $c"
  wrk -t"$(( c < 2 ? 1 : 2 ))" -c"$c" -d"${seconds}s" --latency -s "$work/post.lua" "http://$addr/predict" |
    grep -E 'Requests/sec|50%|99%|Non-2xx|Socket errors'
done

# The same input through `onepass run --bench` (engine alone, batch 1, no HTTP, no batcher):
# the difference to the server's p50 at concurrency 1 is the server's overhead per request.
echo "== onepass run --bench (engine alone, batch 1)"
for _ in $(seq 1 200); do
  echo '{"text":"A man is playing a guitar on a busy street corner.","text_pair":"Someone is making music outside."}'
done >"$work/lines.jsonl"
"$bin" run --model "$model" --input "$work/lines.jsonl" --bench --batch-size 1

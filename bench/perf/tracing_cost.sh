#!/usr/bin/env bash
# Tracing's end-to-end cost (issue 38, docs/tracing.md): `onepass serve` with tracing off, then on
# (100% sampled, http/protobuf, to a loopback OTLP receiver that accepts and discards), alternated
# ROUNDS times on one machine; batch-1 latency (concurrency 1) and samples/s at 32 in flight.
#   bench/perf/tracing_cost.sh [MODEL_DIR]   (default bench/out/perf/mdeberta-v3-base-shaped)
# Environment: ROUNDS (2), N1 (60 requests at concurrency 1), N32 (192 at 32), OUT (bench/out/tracing).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=$root/build/release/apps/onepass/onepass
model=${1:-$root/bench/out/perf/mdeberta-v3-base-shaped}
out=${OUT:-$root/bench/out/tracing}
mkdir -p "$out"
port=8397 collector=4398
python3 - "$collector" <<'PY' &
import http.server, sys
class Receiver(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(200); self.send_header("Content-Length", "0"); self.end_headers()
    def log_message(self, *args): pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Receiver).serve_forever()
PY
receiver=$!
trap 'kill $receiver' EXIT
for round in $(seq 1 "${ROUNDS:-2}"); do
  for mode in off on; do
    flags=()
    [ "$mode" = on ] && flags=(--otlp-endpoint "http://127.0.0.1:$collector")
    OTEL_TRACES_SAMPLER=always_on "$bin" serve --model "nli=$model" --port $port "${flags[@]}" \
      2> "$out/serve-$mode-$round.log" > /dev/null &
    server=$!
    for _ in $(seq 1 240); do curl -sf "localhost:$port/ping" > /dev/null && break; sleep 0.5; done
    "$bin" bench --endpoint "http://127.0.0.1:$port" --model nli -n "${N1:-60}" --warmup 5 \
      --concurrency 1 --no-progress -o "$out/b1-$mode-$round.json"
    "$bin" bench --endpoint "http://127.0.0.1:$port" --model nli -n "${N32:-192}" --warmup 32 \
      --concurrency 32 --no-progress -o "$out/c32-$mode-$round.json"
    curl -s "localhost:$port/metrics" | grep '^onepass_trace' || true
    kill -TERM $server
    wait $server || true
  done
done

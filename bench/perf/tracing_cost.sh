#!/usr/bin/env bash
# Tracing's end-to-end cost (issue 38, docs/performance.md): two `onepass serve` processes of one
# model, tracing off and tracing on (100% sampled, http/protobuf, to a loopback OTLP receiver that
# accepts and discards), both loaded before the first timed request; then ROUNDS rounds, each
# timing both servers in turn (off first in odd rounds, on first in even ones, so drift over the
# run falls on both): batch-1 latency (concurrency 1) and samples/s at 32 in flight. One server
# is idle while the other is timed. Prints each round and the on/off ratios of the medians.
#   bench/perf/tracing_cost.sh [MODEL_DIR]   (default bench/out/perf/mdeberta-v3-base-shaped)
# Environment: ROUNDS (6), N1 (80 requests at concurrency 1), N32 (192 at 32),
# OUT (bench/out/tracing).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=$root/build/release/apps/onepass/onepass
model=${1:-$root/bench/out/perf/mdeberta-v3-base-shaped}
out=${OUT:-$root/bench/out/tracing}
rounds=${ROUNDS:-6}
mkdir -p "$out"
declare -A port=([off]=8397 [on]=8398)
collector=4398
python3 - "$collector" <<'PY' &
import http.server, sys
class Receiver(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(200); self.send_header("Content-Length", "0"); self.end_headers()
    def log_message(self, *args): pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Receiver).serve_forever()
PY
pids=($!)
trap 'kill "${pids[@]}" 2>/dev/null || true' EXIT
for mode in off on; do
  flags=()
  [ "$mode" = on ] && flags=(--otlp-endpoint "http://127.0.0.1:$collector")
  OTEL_TRACES_SAMPLER=always_on "$bin" serve --model "nli=$model" --port "${port[$mode]}" \
    "${flags[@]}" 2> "$out/serve-$mode.log" > /dev/null &
  pids+=($!)
  for _ in $(seq 1 240); do curl -sf "localhost:${port[$mode]}/ping" > /dev/null && break; sleep 0.5; done
done
for round in $(seq 1 "$rounds"); do
  order="off on"
  [ $((round % 2)) = 0 ] && order="on off"
  for mode in $order; do
    url="http://127.0.0.1:${port[$mode]}"
    "$bin" bench --endpoint "$url" --model nli -n "${N1:-80}" --warmup 5 --concurrency 1 \
      --no-progress -o "$out/b1-$mode-$round.json" > /dev/null
    "$bin" bench --endpoint "$url" --model nli -n "${N32:-192}" --warmup 32 --concurrency 32 \
      --no-progress -o "$out/c32-$mode-$round.json" > /dev/null
  done
done
curl -s "localhost:${port[on]}/metrics" | grep '^onepass_trace' || true
python3 - "$out" "$rounds" <<'PY'
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
def run(kind, mode, r):
    return json.load(open(f"{out}/{kind}-{mode}-{r}.json"))["endpoints"][0]["runs"][0]
rows = {"batch-1 p50 ms": ("b1", lambda x: x["latency_ms"]["p50"]),
        "samples/s at 32 in flight": ("c32", lambda x: x["samples_per_s"])}
for name, (kind, pick) in rows.items():
    values = {m: [pick(run(kind, m, r)) for r in range(1, rounds + 1)] for m in ("off", "on")}
    for m in ("off", "on"):
        print(f"{name:27s} {m:3s}: " + " ".join(f"{v:7.2f}" for v in values[m]))
    med = {m: statistics.median(values[m]) for m in values}
    pairs = [b / a for a, b in zip(values["off"], values["on"])]
    print(f"{name:27s} median off {med['off']:.2f}, on {med['on']:.2f}: on/off {med['on'] / med['off']:.3f}"
          f" (per-round ratios' median {statistics.median(pairs):.3f})")
PY

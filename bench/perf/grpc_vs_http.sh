#!/usr/bin/env bash
# The Open Inference Protocol v2 over gRPC against the same protocol over REST (issue 37's bar:
# gRPC's batch-1 p50 within 1.05x of REST's, its samples/s at 64 in flight at least REST's), on
# one `onepass serve --port --grpc-port` per model, measured by the same client on both sides:
# `onepass bench --dialect kserve` (POST /v2/models/m/infer, JSON) and `--dialect kserve-grpc`
# (ModelInfer, BYTES tensors in raw_input_contents), the default NLI dataset, every answer
# verified. Each round runs both protocols, alternating which goes first, so that a drift of the
# shared host weighs on both; the medians over the rounds give the ratios.
#
#   bench/perf/grpc_vs_http.sh [MODEL_DIR...]
# Default models: the tiny fixture (tests/data/fixtures/models/bert-tiny-nli) and
# bench/out/perf/mdeberta-v3-base-shaped (bench/perf/make_shaped.py makes it).
# Environment: ROUNDS (default 5), N1 (requests at concurrency 1, default 200), N64 (requests
# at 64 in flight, default 1280), THREADS (`serve --threads`, default: serve's),
# ONEPASS_BIN (default build/release/apps/onepass/onepass).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${ONEPASS_BIN:-$root/build/release/apps/onepass/onepass}
rounds=${ROUNDS:-5}
if [ $# -eq 0 ]; then
  set -- "$root/tests/data/fixtures/models/bert-tiny-nli" "$root/bench/out/perf/mdeberta-v3-base-shaped"
fi
work=$(mktemp -d)
pid=
stop_server() {
  if [ -n "$pid" ]; then
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    pid=
  fi
}
trap 'stop_server; rm -rf "$work"' EXIT

# run PROTOCOL CONCURRENCY REQUESTS -> one results JSON under $work
run() {
  local protocol=$1 concurrency=$2 requests=$3 endpoint dialect
  if [ "$protocol" = grpc ]; then
    endpoint="grpc://$grpc_addr" dialect=kserve-grpc
  else
    endpoint="http://$http_addr" dialect=kserve
  fi
  "$bin" bench --endpoint "$endpoint" --dialect "$dialect" --model m --concurrency "$concurrency" \
    -n "$requests" --warmup 20 --no-progress -o "$work/$protocol-$concurrency-$round.json" >/dev/null
}

summary() {  # MODEL_NAME -> the model's lines
  python3 - "$work" "$rounds" "$1" <<'EOF'
import json, statistics, sys
work, rounds, model = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def load(protocol, concurrency, r):
    run = json.load(open("%s/%s-%s-%d.json" % (work, protocol, concurrency, r)))["endpoints"][0]["runs"][0]
    if run["errors"]["total"] or run["mismatches"]:
        sys.exit("%s %s at %s: errors or mismatches" % (model, protocol, concurrency))
    return run
p50 = {p: [load(p, 1, r)["latency_ms"]["p50"] for r in range(1, rounds + 1)] for p in ("rest", "grpc")}
sps = {p: [load(p, 64, r)["samples_per_s"] for r in range(1, rounds + 1)] for p in ("rest", "grpc")}
lat_ratios = [g / h for g, h in zip(p50["grpc"], p50["rest"])]
sps_ratios = [g / h for g, h in zip(sps["grpc"], sps["rest"])]
m = statistics.median
print("| %s | %.3f | %.3f | %.3f (rounds %.3f-%.3f) | %.0f | %.0f | %.3f (rounds %.3f-%.3f) |" % (
    model, m(p50["rest"]), m(p50["grpc"]), m(p50["grpc"]) / m(p50["rest"]), min(lat_ratios),
    max(lat_ratios), m(sps["rest"]), m(sps["grpc"]), m(sps["grpc"]) / m(sps["rest"]),
    min(sps_ratios), max(sps_ratios)))
EOF
}

lines=()
for model in "$@"; do
  name=$(basename "$model")
  # shellcheck disable=SC2086 # THREADS adds one flag when set
  "$bin" serve --model "m=$model" --host 127.0.0.1 --port 0 --grpc-port 0 \
    --max-concurrent-requests 256 ${THREADS:+--threads $THREADS} --log-level warn >"$work/out" 2>"$work/log" &
  pid=$!
  for _ in $(seq 1 600); do grep -q '^listening on' "$work/out" && break; sleep 0.1; done
  http_addr=$(grep -o '^listening on [^ ]*' "$work/out" | cut -d' ' -f3)
  grpc_addr=$(grep -o '^grpc listening on [^ ]*' "$work/out" | cut -d' ' -f4)
  for _ in $(seq 1 1200); do curl -sf "http://$http_addr/ping" >/dev/null && break; sleep 0.1; done
  for round in $(seq 1 "$rounds"); do
    order="rest grpc"
    [ $((round % 2)) -eq 0 ] && order="grpc rest"
    for protocol in $order; do run "$protocol" 1 "${N1:-200}"; done
    for protocol in $order; do run "$protocol" 64 "${N64:-1280}"; done
    echo "$name: round $round of $rounds done" >&2
  done
  stop_server
  lines+=("$(summary "$name")")
done

echo "| model | REST batch-1 p50 ms | gRPC p50 ms | gRPC / REST (bar <= 1.05) | REST samples/s at 64 | gRPC samples/s | gRPC / REST (bar >= 1) |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
printf '%s\n' "${lines[@]}"

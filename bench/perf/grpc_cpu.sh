#!/usr/bin/env bash
# Where the CPU of a call goes over REST v2 and over gRPC, on one `onepass serve --port
# --grpc-port`: the same client (`onepass bench --dialect kserve` / `kserve-grpc`) sends REQUESTS
# calls at 64 in flight, ROUNDS times each protocol, and each run prints the server's CPU ticks
# (utime + stime from /proc/PID/stat, 1/100 s) and the client's CPU seconds (bash's `time`, user +
# system). Client and server share the machine's cores, as in grpc_vs_http.sh.
#
#   bench/perf/grpc_cpu.sh [MODEL_DIR]     (default: the tiny fixture bert-tiny-nli)
# Environment: ROUNDS (3), REQUESTS (5000), ONEPASS_BIN (build/release/apps/onepass/onepass).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${ONEPASS_BIN:-$root/build/release/apps/onepass/onepass}
model=${1:-$root/tests/data/fixtures/models/bert-tiny-nli}
work=$(mktemp -d)
"$bin" serve --model "m=$model" --host 127.0.0.1 --port 0 --grpc-port 0 \
  --max-concurrent-requests 256 --log-level warn >"$work/out" 2>"$work/log" &
pid=$!
trap 'kill $pid 2>/dev/null || true; wait $pid 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 1 600); do grep -q '^listening on' "$work/out" && break; sleep 0.1; done
http=$(grep -o '^listening on [^ ]*' "$work/out" | cut -d' ' -f3)
grpc=$(grep -o '^grpc listening on [^ ]*' "$work/out" | cut -d' ' -f4)
for _ in $(seq 1 1200); do curl -sf "http://$http/ping" >/dev/null && break; sleep 0.1; done
ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
echo "| round | protocol | server CPU ticks | client CPU s | samples/s |"
echo "| --- | --- | --- | --- | --- |"
for round in $(seq 1 "${ROUNDS:-3}"); do
  for protocol in rest grpc; do
    if [ "$protocol" = grpc ]; then endpoint=grpc://$grpc dialect=kserve-grpc
    else endpoint=http://$http dialect=kserve; fi
    before=$(ticks)
    TIMEFORMAT='%U %S'
    { time "$bin" bench --endpoint "$endpoint" --dialect "$dialect" --model m --concurrency 64 \
      -n "${REQUESTS:-5000}" --warmup 20 --no-progress -o "$work/run.json" \
      >/dev/null 2>"$work/err"; } 2>"$work/time"
    after=$(ticks)
    sps=$(python3 -c "import json, sys; print(round(json.load(open(sys.argv[1]))['endpoints'][0]['runs'][0]['samples_per_s']))" "$work/run.json")
    echo "| $round | $protocol | $((after - before)) | $(awk '{print $1 + $2}' "$work/time") | $sps |"
  done
done

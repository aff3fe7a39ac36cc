#!/usr/bin/env bash
# The newcomer's command on a fresh Debian 12 machine: installs the dependencies, builds onepass,
# serves a bundled model (the tiny DeBERTa-v2 NLI fixture) on 127.0.0.1 and answers one request
# in each main dialect, then stops the server.
set -euo pipefail
cd "$(dirname "$0")/.."
[ "${ONEPASS_SKIP_DEPS:-0}" = 1 ] || bash scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release -j"$(nproc)" --target onepass
bin=build/release/apps/onepass/onepass
model=tests/data/fixtures/models/deberta-v2-tiny-nli
log=$(mktemp)
"$bin" serve --model nli="$model" --host 127.0.0.1 --port 0 >"$log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true; rm -f "$log"' EXIT
for _ in $(seq 1 100); do
  grep -q 'listening on' "$log" && break
  sleep 0.1
done
addr=$(grep -o 'listening on [^ ]*' "$log" | head -1 | cut -d' ' -f3)
if [ -z "$addr" ]; then
  cat "$log" >&2
  echo "the server did not start" >&2
  exit 1
fi
echo "onepass is serving $model at http://$addr"
ask() {
  echo "\$ curl $*"
  curl -s "$@"
  echo
}
ask "http://$addr/invocations" -H 'Content-Type: application/json' \
  -d '{"inputs":{"text":"A man is playing a guitar.","text_pair":"Someone makes music."}}'
ask "http://$addr/predict" -H 'Content-Type: application/json' \
  -d '{"inputs":["A man is playing a guitar.","Someone makes music."]}'
ask "http://$addr/invocations" -H 'Content-Type: application/json' \
  -d '{"inputs":"The new phone has a great camera.","parameters":{"candidate_labels":["technology","sports","cooking"]}}'

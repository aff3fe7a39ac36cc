#!/usr/bin/env bash
# One command for the issue-6 comparison: regenerates the full-size perf weights when missing,
# installs the ONNX Runtime peer (npm onnxruntime-node) in bench/.peer, builds onepass (release)
# and runs both on the same inputs, writing bench/out/perf-<model>.json.
#
#   bench/perf/run.sh [MODEL ...]     (default: all eight perf models)
# A MODEL is a folder of the shared kit (../shared/perf-models: mdeberta-v3-base-shaped,
# bert-base-shaped, minilm-l12-h384-multilingual-shaped, xlmr-base-shaped) or of this repo's
# bench/perf/models (distilbert-base-shaped, electra-base-shaped, mpnet-base-shaped,
# modernbert-base-shaped; made by make_shaped.py).
# The complete folders (weights included) are bench/out/perf/<model>.
# Environment: THREADS (default "1,2"), RUNS (default 10), ONLY (workload filter, e.g. 1x59,mixed32),
# PRECISIONS (onepass's reduced precisions to time as well, e.g. bf16,int8; default none),
# PLAIN=1 (also build onepass as a packager does, `cmake -DCMAKE_BUILD_TYPE=Release` with no
# preset, in build/plain, and time it beside the preset's build on every workload: issue 34),
# PREPARE_ONLY=1 (regenerate the weights, install the peer, build onepass, and stop: auto.sh)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
shared=${ONEPASS_SHARED:-$root/../shared}
out=$root/bench/out
perf=$out/perf
peer=$root/bench/.peer
models=("$@")
if [ ${#models[@]} -eq 0 ]; then
  models=(mdeberta-v3-base-shaped bert-base-shaped minilm-l12-h384-multilingual-shaped xlmr-base-shaped
    distilbert-base-shaped electra-base-shaped mpnet-base-shaped modernbert-base-shaped)
fi
mkdir -p "$perf" "$peer"

for m in "${models[@]}"; do
  src=$root/bench/perf/models/$m
  [ -f "$src/manifest.json" ] || src=$shared/perf-models/$m
  if [ ! -f "$src/manifest.json" ]; then
    echo "unknown perf model '$m' (not in bench/perf/models nor in $shared/perf-models)" >&2
    exit 2
  fi
  if [ ! -f "$perf/$m/model.safetensors" ]; then
    echo "regenerating $m weights" >&2
    /usr/bin/python3 "$shared/perf-models/gen_weights.py" --model "$src" --out "$perf/$m" >&2
  else
    # The weights are made once; the small files (graph, golden, config) follow the source.
    find "$src" -maxdepth 1 -type f ! -name '*.safetensors' -exec cp {} "$perf/$m/" \;
  fi
done

if [ ! -d "$peer/node_modules/onnxruntime-node" ]; then
  echo "installing onnxruntime-node into $peer" >&2
  # --ignore-scripts: the package's install script only fetches optional GPU providers.
  (cd "$peer" && npm install --no-audit --no-fund --ignore-scripts onnxruntime-node@1.30.0 >&2)
fi

cmake --preset release -S "$root" >/dev/null
cmake --build --preset release -j"$(nproc)" --target onepass >&2
[ "${PREPARE_ONLY:-0}" = 1 ] && exit 0
also=""
if [ "${PLAIN:-0}" = 1 ]; then
  cmake -S "$root" -B "$root/build/plain" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$root/build/plain" -j"$(nproc)" --target onepass >&2
  also="plain=$root/build/plain/apps/onepass/onepass"
fi

for m in "${models[@]}"; do
  node "$root/bench/perf/compare.mjs" --model "$perf/$m" --onepass "$root/build/release/apps/onepass/onepass" \
    --ort-from "$peer" --threads "${THREADS:-1,2}" --runs "${RUNS:-10}" --only "${ONLY:-}" --precisions "${PRECISIONS:-}" \
    --also "$also" --out "$out/perf-$m.json"
done

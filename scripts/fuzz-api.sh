#!/usr/bin/env bash
# Longer fuzzing of the HTTP request path and every JSON request decoder (src/api/fuzz/*_fuzz.cpp)
# than the short runs of scripts/test.sh: builds those targets with the fuzz preset (clang,
# ASan + UBSan, UBSan fatal here), runs each for SECONDS (default 300), keeps corpora under
# build/fuzz/api-corpus/<name> and crash inputs under build/fuzz/api-artifacts/<name>/.
# Usage: scripts/fuzz-api.sh [SECONDS] [TARGET...]   (default: every target)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-300}"
shift || true
targets="$*"
if [ -z "$targets" ]; then
  targets=$(ls src/api/fuzz/*_fuzz.cpp | xargs -n1 basename | sed 's/\.cpp$//')
fi
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz -j"$(nproc)" --target $targets
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"
status=0
for name in $targets; do
  corpus="build/fuzz/api-corpus/$name"
  artifacts="build/fuzz/api-artifacts/$name/"
  mkdir -p "$corpus" "$artifacts"
  echo "== $name for ${seconds}s"
  if ! "build/fuzz/src/api/$name" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 \
      -print_final_stats=1 -artifact_prefix="$artifacts" "$corpus" "src/api/fuzz/corpus/$name"; then
    echo "!! $name found a failure (input saved under $artifacts)"
    status=1
  fi
done
exit $status

#!/usr/bin/env bash
# Longer fuzzing of every tokenizer libFuzzer target (src/tokenizer/fuzz/*_fuzz.cpp) than the
# short runs of scripts/test.sh: builds the fuzz preset (clang, ASan + UBSan) and runs each
# target for SECONDS (default 300), keeping corpora under build/fuzz/tokenizer-corpus/<name>.
# Usage: scripts/fuzz-tokenizers.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-300}"
cmake --preset fuzz >/dev/null
targets=$(ls src/tokenizer/fuzz/*_fuzz.cpp | xargs -n1 basename | sed 's/\.cpp$//')
cmake --build --preset fuzz -j"$(nproc)" --target $targets
status=0
for name in $targets; do
  corpus="build/fuzz/tokenizer-corpus/$name"
  mkdir -p "$corpus"
  seeds=()
  [ -d "src/tokenizer/fuzz/corpus/$name" ] && seeds=("src/tokenizer/fuzz/corpus/$name")
  echo "== $name for ${seconds}s"
  if ! "build/fuzz/src/tokenizer/$name" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 \
      -print_final_stats=1 "$corpus" "${seeds[@]}"; then
    echo "!! $name found a failure (see the crash-* file above)"
    status=1
  fi
done
exit $status

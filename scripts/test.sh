#!/usr/bin/env bash
# The test command: builds the release preset and runs every test, then builds the libFuzzer
# targets (clang, ASan + UBSan) and runs each for a short time. CI runs exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
cmake --preset release >/dev/null
cmake --build --preset release -j"$jobs"
ctest --preset release -j"$jobs"
if [ "${ONEPASS_SKIP_FUZZ:-0}" != "1" ]; then
  cmake --preset fuzz >/dev/null
  cmake --build --preset fuzz -j"$jobs"
  ctest --preset fuzz -j"$jobs"
fi

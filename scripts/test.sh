#!/usr/bin/env bash
# The test command (CI runs exactly this, on a fresh Debian 12 root: scripts/fresh-machine.sh).
# Four stages, each must pass, in this order (each one catches what the others cannot):
#   release  build every target with warnings as errors, run the whole ctest suite
#   asan     the same suite built with AddressSanitizer + UndefinedBehaviorSanitizer (g++),
#            leak checking on, undefined behaviour fatal
#   fuzz     every libFuzzer target (clang, ASan + UBSan) for ONEPASS_FUZZ_SECONDS each (20)
#   format   clang-format --dry-run -Werror over every tracked C++ file
# Each stage prints its wall time. ONEPASS_TEST_STAGES="release format" runs only those.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
stages=${ONEPASS_TEST_STAGES:-release asan fuzz format}
[ "${ONEPASS_SKIP_FUZZ:-0}" = 1 ] && stages=${stages//fuzz/}
times=()
failed=()

build_and_test() { # build_and_test PRESET
  cmake --preset "$1" >/dev/null
  cmake --build --preset "$1" -j"$jobs"
  ctest --preset "$1" -j"$jobs"
}

format_check() {
  local bad=0 f
  while IFS= read -r f; do
    if ! clang-format --dry-run -Werror "$f" 2>/dev/null; then
      echo "not formatted (run clang-format -i $f)" >&2
      bad=1
    fi
  done < <(git ls-files -- '*.cpp' '*.cc' '*.h' '*.hpp')
  return "$bad"
}

for stage in $stages; do
  start=$(date +%s)
  echo "=== test stage $stage"
  case $stage in
    release | asan | fuzz) build_and_test "$stage" && rc=0 || rc=$? ;;
    format) format_check && rc=0 || rc=$? ;;
    *) echo "unknown stage $stage" >&2; exit 2 ;;
  esac
  s=$(($(date +%s) - start))
  echo "=== test stage $stage: $s s (exit $rc)"
  times+=("$stage=${s}s")
  [ "$rc" -eq 0 ] || failed+=("$stage")
  # A release build that does not compile says nothing the other stages could add.
  if [ "$stage" = release ] && [ "$rc" -ne 0 ] && ! [ -x build/release/apps/onepass/onepass ]; then
    break
  fi
done
echo "test stages: ${times[*]}"
if [ "${#failed[@]}" -gt 0 ]; then
  echo "FAILED: ${failed[*]}" >&2
  exit 1
fi
echo "all test stages passed"

#!/usr/bin/env bash
# The test command (CI runs exactly this, on a fresh Debian 12 root: scripts/fresh-machine.sh).
# Four stages, each must pass, in this order (each one catches what the others cannot):
#   release  build every target with warnings as errors, run the whole ctest suite
#   asan     the same suite built with AddressSanitizer + UndefinedBehaviorSanitizer (g++),
#            leak checking on, undefined behaviour fatal
#   fuzz     every libFuzzer target (clang, ASan + UBSan) for ONEPASS_FUZZ_SECONDS each (20)
#   format   clang-format --dry-run -Werror over every tracked C++ file
# Each stage prints its wall time, its build and its tests timed apart.
#
#   scripts/test.sh                              # all four stages
#   scripts/test.sh asan format                  # only these stages
#   scripts/test.sh release -- -R '^model_test$' # one stage, one test binary (ctest's arguments
#                                                # after --: -R REGEX, -L LABEL, -E REGEX, ...)
#   scripts/test.sh asan -- -R serve_e2e --output-on-failure -V
#
# ONEPASS_TEST_STAGES="release format" does the same as naming stages (when none is named).
# Before release or asan, tests/clients/install.sh installs the npm client tests' packages into
# build/npm-clients (once; ctest downloads nothing).
# ONEPASS_STAGE_LOG=FILE appends "STAGE.build SECONDS" and "STAGE.test SECONDS" lines (.ci/run's
# table). docs/ci.md has each stage's budget and the times of the last runs.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
stages=()
while [ $# -gt 0 ]; do
  case $1 in
    --) shift; break ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) stages+=("$1"); shift ;;
  esac
done
ctest_args=("$@")
if [ "${#stages[@]}" -eq 0 ]; then
  read -r -a stages <<<"${ONEPASS_TEST_STAGES:-release asan fuzz format}"
fi
times=()
failed=()

log_time() { # log_time NAME SECONDS: one line of the CI stage table
  [ -z "${ONEPASS_STAGE_LOG:-}" ] || echo "$1 $2" >>"$ONEPASS_STAGE_LOG"
}

build_and_test() { # build_and_test PRESET
  local t0 t1 rc=0
  t0=$(date +%s)
  cmake --preset "$1" >/dev/null
  cmake --build --preset "$1" -j"$jobs" || rc=$?
  t1=$(date +%s)
  log_time "$1.build" $((t1 - t0))
  [ "$rc" -eq 0 ] || return "$rc"
  ctest --preset "$1" -j"$jobs" "${ctest_args[@]}" || rc=$?
  log_time "$1.test" $(($(date +%s) - t1))
  return "$rc"
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

# The npm client tests' packages, installed once for every stage that runs ctest (the tests
# download nothing; tests/clients/install.sh leaves an unchanged folder alone).
if [[ " ${stages[*]} " == *" release "* || " ${stages[*]} " == *" asan "* ]] &&
  command -v npm >/dev/null; then
  start=$(date +%s)
  tests/clients/install.sh || echo "tests/clients/install.sh failed: the npm client tests will fail" >&2
  log_time npm.install $(($(date +%s) - start))
fi

for stage in "${stages[@]}"; do
  start=$(date +%s)
  echo "=== test stage $stage"
  case $stage in
    release | asan | fuzz) build_and_test "$stage" && rc=0 || rc=$? ;;
    format)
      format_check && rc=0 || rc=$?
      log_time format $(($(date +%s) - start))
      ;;
    *) echo "unknown stage $stage (release, asan, fuzz or format)" >&2; exit 2 ;;
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

#!/usr/bin/env bash
# Issue 42, item 5: what `--precision auto` chooses for every test fixture, and why: one
# `onepass check --save-verdict` per fixture into a fresh --state-dir, printed as a markdown
# table (fixture, architecture, chosen precision, gate seconds, the verdict's reasons).
# A fixture whose backbone config only the Hub has (gliner-published/*-noenc) is listed with its
# error: the gate runs offline here.
#
#   bench/perf/auto_fixtures.sh [FIXTURE_DIR ...]   (default: every tests/data/fixtures model)
# Environment: ONEPASS_BIN (default build/release/apps/onepass/onepass), THREADS (default 2).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${ONEPASS_BIN:-$root/build/release/apps/onepass/onepass}
if [ $# -eq 0 ]; then
  set -- "$root"/tests/data/fixtures/models/*/ "$root"/tests/data/fixtures/gliner-published/*/
fi
state=$(mktemp -d)
trap 'rm -rf "$state"' EXIT
echo "| fixture | architecture | auto chose | gate s | why |"
echo "|---|---|---|---|---|"
for dir in "$@"; do
  name=$(basename "$dir")
  if report=$("$bin" check --model "$dir" --save-verdict --state-dir "$state" \
      --threads "${THREADS:-2}" 2>"$state/err"); then
    python3 -c '
import json, sys
r = json.loads(sys.argv[2])
print("| %s | %s | %s | %.2f | %s |" % (sys.argv[1], r["architecture"], r["chosen"], r["seconds"],
                                      r["verdict"]))' "$name" "$report"
  else
    echo "| $name | | (no verdict) | | $(tail -1 "$state/err" | tr '|' '/') |"
  fi
done

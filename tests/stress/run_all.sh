#!/bin/sh
# Runs every long-run reliability check of docs/reliability.md against build/release's onepass (or
# $ONEPASS_BIN) with their default lengths (about 10 minutes on 2 cores); each prints PASS/FAIL
# lines with its numbers. Exit status: the number of checks that failed.
cd "$(dirname "$0")" || exit 1
failed=0
for check in overload.py memory.py connections.py sigterm.py; do
  echo "== $check"
  python3 "$check" || failed=$((failed + 1))
done
echo "== $failed of 4 checks failed"
exit "$failed"

#!/bin/sh
# ctest driver for one npm client test: installs the exact versions of its package.json into
# WORK_DIR (once, or again when package.json changes) and runs the test script with node.
# usage: run_npm_test.sh TEST_SRC_DIR WORK_DIR SCRIPT.mjs ARGS...
set -eu
src=$1 work=$2 script=$3
shift 3
command -v node >/dev/null || { echo "node is missing: run scripts/install-deps.sh" >&2; exit 1; }
mkdir -p "$work"
if ! cmp -s "$src/package.json" "$work/package.json" || [ ! -d "$work/node_modules" ]; then
  cp "$src/package.json" "$work/package.json"
  (cd "$work" && npm install --no-audit --no-fund --ignore-scripts --no-package-lock >&2)
fi
cp "$src"/*.mjs "$src/../serve.mjs" "$work/"
cd "$work"
exec node "$script" "$@"

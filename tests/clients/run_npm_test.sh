#!/bin/sh
# ctest driver for one npm client test: runs the test script with node beside the packages
# tests/clients/install.sh installed for its folder. It downloads nothing: packages that are
# missing, or installed from another package.json, fail the test naming the script to run.
# usage: run_npm_test.sh TEST_SRC_DIR PACKAGES_DIR WORK_DIR SCRIPT.mjs ARGS...
set -eu
src=$1 packages=$2 work=$3 script=$4
shift 4
command -v node >/dev/null || { echo "node is missing: run scripts/install-deps.sh" >&2; exit 1; }
if ! cmp -s "$src/package.json" "$packages/package.json" || [ ! -d "$packages/node_modules" ]; then
  echo "the npm packages of $(basename "$src") are not installed in $packages, or not from its" \
    "current package.json: run tests/clients/install.sh $(dirname "$packages")" >&2
  exit 1
fi
mkdir -p "$work"
cp "$src"/*.mjs "$src/../serve.mjs" "$work/"
# A work folder from before the packages moved out of it holds a real node_modules.
[ -L "$work/node_modules" ] || rm -rf "$work/node_modules"
ln -sfn "$packages/node_modules" "$work/node_modules"
cd "$work"
exec node "$script" "$@"

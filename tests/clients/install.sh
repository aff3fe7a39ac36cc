#!/bin/sh
# Installs the npm client tests' packages, the exact versions of each folder's package.json, into
# DEST/<folder> (default build/npm-clients), once: a folder whose package.json is unchanged and
# whose node_modules is there is left alone. scripts/test.sh runs it before its stages, so that
# no ctest test downloads anything (run_npm_test.sh only runs node, and fails naming this script
# when a folder's packages are missing or stale).
# usage: tests/clients/install.sh [DEST]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
dest=${1:-$here/../../build/npm-clients}
command -v npm >/dev/null || { echo "npm is missing: run scripts/install-deps.sh" >&2; exit 1; }
for package in "$here"/*/package.json; do
  name=$(basename "$(dirname "$package")")
  work=$dest/$name
  if cmp -s "$package" "$work/package.json" && [ -d "$work/node_modules" ]; then continue; fi
  mkdir -p "$work"
  rm -rf "$work/node_modules"
  cp "$package" "$work/package.json"
  echo "npm install: $name"
  (cd "$work" && npm install --no-audit --no-fund --ignore-scripts --no-package-lock >&2)
done

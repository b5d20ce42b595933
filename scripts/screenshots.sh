#!/usr/bin/env bash
# Chromium screenshots (1280×800) of report.html — the quickstart's and the held-out example's —
# and of the dashboard while rounds run through it; the leaderboard must be on the first screen.
# Usage: bash scripts/screenshots.sh <out dir> [<runs dir>]   (runs dir default: runs/screenshots)
set -euo pipefail
out=${1:?usage: scripts/screenshots.sh <out dir> [<runs dir>]}
runs=${2:-runs/screenshots}
mkdir -p "$out" "$runs"
out=$(cd "$out" && pwd)
for name in quickstart heldout-free-rider-label-flip; do
  [ -f "$runs/$name/report.html" ] ||
    npx tsx src/cli/main.ts experiment --config "examples/$name.json" --out "$runs/$name" >"$runs/$name.log" 2>&1
done
npx tsx scripts/screenshots.ts --out "$out" \
  "report-quickstart=$runs/quickstart/report.html" \
  "report-heldout=$runs/heldout-free-rider-label-flip/report.html"
FEDSCORE_SHOTS=$out npx vitest run test/server/dashboard.test.ts -t 'follows a running round' >/dev/null
ls -l "$out"/*.png

#!/usr/bin/env bash
# Render a run's report.html to a PNG with headless Chromium, to check by eye that it reads
# as a geophysicist's report (figures legible, units, colour bars).
#
#   scripts/report-screenshot.sh runs/<run>/report.html report.png [height_px]
#
# Needs Debian's `chromium` (apt-get install chromium). The report is self-contained (figures
# embedded), so the page is opened straight from the file; nothing is fetched.
set -euo pipefail
html=${1:?usage: $0 report.html out.png [height_px]}
out=${2:?usage: $0 report.html out.png [height_px]}
height=${3:-6000}
command -v chromium >/dev/null || { echo "chromium is not installed (apt-get install chromium)" >&2; exit 1; }
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --user-data-dir="$profile" --hide-scrollbars --window-size=1100,"$height" \
  --screenshot="$(realpath -m "$out")" "file://$(realpath "$html")" 2>/dev/null
echo "wrote $out"

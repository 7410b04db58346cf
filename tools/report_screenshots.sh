#!/usr/bin/env bash
# Regenerates the report screenshots in docs/ (docs/usage.md, "HTML reports"): the HTML
# reports of sample traces as headless Chromium draws them (report_outlier:
# the ns/op chart and the scatter with boost_pool far slower), cropped and
# reduced to 256 colours so each stays small. Prints each report's size.
# Needs tools/setup.sh --with-browser. Timings come from this machine now:
# the pictures show the layout, not reference figures.
set -euo pipefail
cd "$(dirname "$0")/.."
bazel build --color=no --curses=no //inspect //replayer 2>/dev/null \
  || { echo "report_screenshots: build failed (bazel build //inspect //replayer)"; exit 1; }
bin=$(bazel info bazel-bin 2>/dev/null)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Written here, then moved: the pages show the command line as typed.
"$bin/inspect/inspect" --html --out=inspect.html traces/random.trace
"$bin/replayer/replayer" --quiet --format=html --out=report.html traces/simple_map.trace
mv inspect.html "$tmp/inspect.html"
mv report.html "$tmp/replay.html"
"$bin/replayer/replayer" --quiet --budget=1 --format=html --out=report.html \
  --policies='malloc,new,slab/st/*,small_node/st/*,tcmalloc,jemalloc,mimalloc,boost_*,pmr_*,pool/*/exp/st/stack/free' \
  traces/simple_map.trace traces/random.trace traces/list_churn.trace \
  traces/unordered_map.trace traces/make_shared.trace traces/bulk.trace
mv report.html "$tmp/overview.html"
# An outlier: boost_pool runs ~40x slower than the rest on simple_map; the
# ns/op chart and the scatter frame the others and put it past their edge.
"$bin/replayer/replayer" --quiet --budget=0.5 --format=html --out=report.html \
  --policies='malloc,new,slab/st/*,small_node/st/*,boost_*,pmr_*,pool/*/exp/st/stack/free' \
  traces/simple_map.trace
mv report.html "$tmp/outlier_full.html"
# The article's grid, for the policy effects.
"$bin/replayer/replayer" --quiet --min_runs=5 --budget=0.3 --format=html --out=report.html \
  --policies='malloc,slab/st/*,pool/*' traces/random.trace
mv report.html "$tmp/grid.html"
wc -c "$tmp"/*.html | sed '$d' | awk '{printf "report_screenshots: %s is %d bytes\n", $2, $1}'

# Sections alone, under the page's own head (doc-only cuts): the policy
# effects of the grid; the ns/op chart and the scatter of the outlier run.
cut() {  # $1: page, $2: out, $3: where the cut starts, $4: where it ends
  /usr/bin/python3 - "$@" <<'PY'
import sys
page = open(sys.argv[1], encoding="utf-8").read()
head = page[:page.index("<main>")]
start = page.index(sys.argv[3])
end = page.index(sys.argv[4], start)
open(sys.argv[2], "w", encoding="utf-8").write(head + "<main>" + page[start:end] + "</main></body></html>")
PY
}
cut "$tmp/grid.html" "$tmp/effects.html" "<h3>The article's policy effects</h3>" "<h3>Every policy</h3>"
cut "$tmp/outlier_full.html" "$tmp/outlier.html" '<figure class="chart chart-interval" id="trace-0-speed"' \
  "<h3>The article's policy effects</h3>"

shoot() {  # $1: page, $2: png, $3: window height
  local profile
  profile=$(mktemp -d "$tmp/profile.XXXXXX")
  chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --disable-extensions --hide-scrollbars --user-data-dir="$profile" \
    --window-size=1280,"$3" --screenshot="$2" "file://$1" >/dev/null 2>&1
}
shoot "$tmp/replay.html" "$tmp/replay.png" 1500
shoot "$tmp/overview.html" "$tmp/overview.png" 1300
shoot "$tmp/effects.html" "$tmp/effects.png" 1400
shoot "$tmp/inspect.html" "$tmp/inspect.png" 1900
shoot "$tmp/outlier.html" "$tmp/outlier.png" 1200

/usr/bin/python3 - "$tmp" docs <<'PY'
import os, sys
from PIL import Image
src, dst = sys.argv[1], sys.argv[2]
for name in ("replay", "overview", "effects", "inspect", "outlier"):
    im = Image.open(os.path.join(src, name + ".png")).convert("RGB")
    # Trim white space at the bottom.
    w, h = im.size
    bbox = Image.eval(im, lambda v: 255 - v).getbbox() or (0, 0, w, h)
    im = im.crop((0, 0, w, min(h, bbox[3] + 16)))
    out = os.path.join(dst, "report_" + name + ".png")
    im.quantize(colors=256, method=Image.Quantize.MEDIANCUT).save(out, optimize=True)
    print(f"report_screenshots: {out} {im.size[0]}x{im.size[1]}, {os.path.getsize(out)} bytes")
PY

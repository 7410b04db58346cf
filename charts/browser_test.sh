#!/usr/bin/env bash
# Opens the HTML reports in headless Chromium and checks that they render:
# the expected charts present, marks drawn, the screenshot not blank; that
# each file references nothing outside itself; and that a trace whose
# strings are hostile markup runs no script and shows the strings as text.
# Needs Debian's chromium and python3-pil (tools/setup.sh --with-browser).
set -euo pipefail

fail() { echo "FAIL: $*"; exit 1; }

CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
[ -n "$CHROMIUM" ] || fail "chromium is not installed (tools/setup.sh --with-browser installs it)"
PYTHON=/usr/bin/python3
"$PYTHON" -c 'import PIL' 2>/dev/null \
  || fail "python3-pil is not installed (tools/setup.sh --with-browser installs it)"

INSPECT=inspect/inspect
REPLAYER=replayer/replayer
WRITE_HOSTILE=format/write_hostile_trace
CHECK=charts/check_page.py
tmp=${TEST_TMPDIR:-$(mktemp -d)}
out=${TEST_UNDECLARED_OUTPUTS_DIR:-$tmp}
export HOME=$tmp  # chromium writes its profile and caches under $HOME

# Renders $1 to $2.dom and $2.png ($3: window height).
render() {
  local page=$1 base=$2 height=$3 profile
  profile=$(mktemp -d "$tmp/profile.XXXXXX")
  local flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run
               --disable-background-networking --disable-component-update --disable-sync
               --disable-extensions --hide-scrollbars --user-data-dir="$profile")
  timeout 120 "$CHROMIUM" "${flags[@]}" --dump-dom "file://$page" >"$base.dom" 2>"$base.log" \
    || fail "chromium --dump-dom $page: $(tail -3 "$base.log")"
  timeout 120 "$CHROMIUM" "${flags[@]}" --window-size=1280,"$height" \
    --screenshot="$base.png" "file://$page" >>"$base.log" 2>&1 \
    || fail "chromium --screenshot $page: $(tail -3 "$base.log")"
  [ -s "$base.png" ] || fail "no screenshot of $page"
  cp "$base.png" "$out/" 2>/dev/null || true
}

"$WRITE_HOSTILE" "$tmp/hostile.trace"

# inspect --html: a sample trace and the hostile one.
for t in traces/list_churn.trace "$tmp/hostile.trace"; do
  name=inspect_$(basename "$t" .trace)
  "$INSPECT" --html --out="$tmp/$name.html" "$t"
  render "$tmp/$name.html" "$tmp/$name" 2000
  "$PYTHON" "$CHECK" inspect "$tmp/$name.dom" "$tmp/$name.png" "$tmp/$name.html" \
    '#live-bytes=1' '#live-objects=1' '#size-histogram=1' '#arena-lifetimes=1' \
    'path.series=2' 'rect.bar=1' 'rect.span=1' 'svg=4'
done

# replayer --format=html over two traces (a sample and the hostile one):
# the overview's heat map and table, then each trace's charts. A policy set
# with a pair in each of the article's five dimensions, and no preloaded
# malloc (they cannot run beside ASan).
policies='malloc,slab/st/*,bump,pmr_monotonic,pool/*/*/st/stack/*,pool/simple/exp/mt/stack/free,pool/boundary/exp/mt/stack/free,pool/simple/exp/st/single/free,pool/boundary/exp/st/single/free'
"$REPLAYER" --quiet --min_runs=3 --max_runs=3 --max_reruns=0 --passes=2 --warm_ms=0 --budget=0 --rss_samples=50 --policies="$policies" --format=html \
  --out="$tmp/replay_hostile.html" traces/list_churn.trace "$tmp/hostile.trace"
render "$tmp/replay_hostile.html" "$tmp/replay_hostile" 3000
# 19 policies, 18 contenders (bump is the floor); two rows in each
# dimension's effects panels. check_page.py also checks that the charts
# read: every line chart's legend names exactly its lines, every scatter
# point is tagged (no tag over another or over a point) and keyed, no point
# on an axis line, each verdict names each policy once, no effects panel of
# a single row.
"$PYTHON" "$CHECK" replay "$tmp/replay_hostile.dom" "$tmp/replay_hostile.png" \
  "$tmp/replay_hostile.html" \
  '#overview=1' '#heatmap=1' '#overview-table=1' \
  '#trace-0-verdict=1' '#trace-0-profile=1' '#trace-0-speed=1' '#trace-0-pareto=1' \
  '#trace-0-table=1' '#trace-1-verdict=1' '#trace-1-speed=1' \
  '#trace-0-effects-storage-speed=1' '#trace-0-effects-growth-speed=1' \
  '#trace-0-effects-threading-speed=1' '#trace-0-effects-holding-speed=1' \
  '#trace-0-effects-delete-rss=1' \
  'rect.cell=32' 'path.series=26' 'circle.dot=34' 'path.ci=34' 'rect.band=1' \
  'figure.chart-interval=22' 'figure.chart-scatter=2' 'figure.chart-heatmap=1'
# An outlier: boost_pool is ~40x slower than the rest on simple_map. The
# ns/op chart and the scatter frame the others and put it past their edge.
"$REPLAYER" --quiet --min_runs=3 --max_runs=3 --max_reruns=0 --passes=2 --warm_ms=0 --budget=0 --rss_samples=50 \
  --policies='malloc,slab/st/*,pmr_monotonic,pmr_unsync_pool,boost_fast_pool,boost_pool' --format=html \
  --out="$tmp/replay_outlier.html" traces/simple_map.trace
render "$tmp/replay_outlier.html" "$tmp/replay_outlier" 2500
"$PYTHON" "$CHECK" replay "$tmp/replay_outlier.dom" "$tmp/replay_outlier.png" \
  "$tmp/replay_outlier.html" \
  '#trace-0-verdict=1' '#trace-0-speed=1' '#trace-0-pareto=1' 'circle.offscale=2' \
  'text.offscale-value=1' 'text.point-label=7'
ls -la "$tmp"/*.html | awk '{print "  " $5 " bytes  " $9}'
echo "PASS: every report rendered, self-contained, hostile strings shown as text"

#!/usr/bin/env bash
# Checks the sampled windows against whole runs on one or more traces: the
# default command (windows where --windows=auto takes them), then whole
# runs (--windows=never) of the policies it left in the race, ROUNDS rounds
# each; prints, per trace, each policy's ratio to glibc malloc both ways,
# with its 95% CI and the rounds it rests on, whether the two intervals
# overlap, and the two recommendations. docs/results.md gives what it
# printed and how to read it.
#
#   tools/windows_vs_whole.sh TRACE...                 # 8 whole rounds
#   ROUNDS=5 tools/windows_vs_whole.sh TRACE...        # quicker
#   WINDOWS=always tools/windows_vs_whole.sh traces/*.trace
#                     # windows on traces --windows=auto runs whole (short)
#   REPLAYER_BIN=path/to/replayer tools/windows_vs_whole.sh TRACE...
#   WHOLE=mimalloc,jemalloc tools/windows_vs_whole.sh TRACE...
#                     # whole runs of these too (eliminated ones have
#                     # windowed ratios from the rounds they ran)
#
# Run it on a quiet machine: the whole runs of a 10 M-op trace take a
# second each, about ROUNDS x (contenders + 2) seconds per trace.
# Exit status: 1 if a replay failed to produce a report.
set -euo pipefail
cd "$(dirname "$0")/.."

replayer=bazel-bin/replayer/replayer
if [ -n "${REPLAYER_BIN:-}" ]; then
  replayer=$REPLAYER_BIN
else
  bazel build -c opt --color=no --curses=no //replayer >/dev/null 2>&1 || {
    echo "windows_vs_whole: bazel build //replayer failed" >&2
    exit 1
  }
fi
rounds=${ROUNDS:-8}
[ $# -gt 0 ] || {
  echo "usage: tools/windows_vs_whole.sh TRACE..." >&2
  exit 2
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for trace in "$@"; do
  [ -f "$trace" ] || {
    echo "windows_vs_whole: no such trace: $trace" >&2
    exit 1
  }
  start=$(date +%s.%N)
  "$replayer" --quiet --windows="${WINDOWS:-auto}" --format=json --out="$tmp/windowed.json" \
    "$trace" || [ $? -eq 3 ]
  end=$(date +%s.%N)
  [ -s "$tmp/windowed.json" ] || {
    echo "windows_vs_whole: no report from the default command on $trace" >&2
    exit 1
  }
  # The contenders the race left (glibc malloc always runs).
  left=$(python3 - "$tmp/windowed.json" <<'EOF'
import json, sys
t = json.load(open(sys.argv[1]))["traces"][0]
names = [p["policy"] for p in t["policies"]
         if p["status"] == "ok" and not p["eliminated"] and not p["screened_out"]
         and p["policy"] != "malloc" and p["runs_ok"] > 0]
print(",".join(names))
EOF
)
  [ -z "${WHOLE:-}" ] || left="${left:+$left,}$WHOLE"
  "$replayer" --quiet --format=json --out="$tmp/whole.json" --windows=never --race=false \
    --passes=1 --min_runs="$rounds" --max_runs="$rounds" --budget=1000 \
    --policies="$left" "$trace" || [ $? -eq 3 ]
  python3 - "$trace" "$tmp/windowed.json" "$tmp/whole.json" "$start" "$end" <<'EOF'
import json, sys
trace, windowed_path, whole_path, start, end = sys.argv[1:6]
windowed = json.load(open(windowed_path))["traces"][0]
whole = json.load(open(whole_path))["traces"][0]

def ratios(t):
    out = {}
    for p in t["policies"]:
        r = p.get("cold_vs_malloc")
        if p["status"] == "ok" and r and r.get("median"):
            out[p["policy"]] = r
    return out

def words(r):
    if r is None:
        return "-"
    lo, hi = r["ci95"] if r.get("ci95") else (None, None)
    ci = f"[{lo:.2f}, {hi:.2f}]" if lo is not None else "(no interval)"
    return f"{r['median']:.2f}x {ci} n={r['n']}"

def overlap(a, b):
    if a is None or b is None or not a.get("ci95") or not b.get("ci95"):
        return "-"
    return "yes" if a["ci95"][0] <= b["ci95"][1] and b["ci95"][0] <= a["ci95"][1] else "NO"

w, h = ratios(windowed), ratios(whole)
s = windowed["sampling"]
how = (f"windows: {s['windows_per_run']} of {s['window_ops']} ops per run, "
       f"{s['strata']} strata" if s.get("windowed") else "whole runs (auto kept them)")
print(f"## {trace}\n")
print(f"default command: {float(end) - float(start):.1f} s, {windowed['rounds']} rounds, {how}; "
      f"whole runs: {whole['rounds']} rounds of one cold pass\n")
print("| policy | default command, x glibc malloc | whole runs, x glibc malloc | CIs overlap |")
print("|---|---|---|---|")
names = sorted(set(w) & set(h) - {"malloc"}, key=lambda n: -w[n]["median"])
agree = 0
for n in names:
    o = overlap(w[n], h[n])
    agree += o == "yes"
    print(f"| {n} | {words(w[n])} | {words(h[n])} | {o} |")
rw = windowed["verdict"]["recommended"]
rh = whole["verdict"]["recommended"]
print(f"\n{agree} of {len(names)} intervals overlap; recommended: {rw} (default command), "
      f"{rh} (whole runs){'' if rw == rh else ' -- they differ'}\n")
EOF
done

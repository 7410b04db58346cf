#!/usr/bin/env bash
# Capture overhead on an allocation-heavy real program: python3 churning a
# dict of lists. Each round runs it plain, captured, and captured with call
# sites (--call_sites=8), interleaved so drift hits all three alike, and
# prints each run's wall and CPU seconds and the medians of the per-round
# ratios. Not a test (timings are machine-dependent).
#   bazel run //tracer/capture:measure_overhead [-- RUNS]
# PYTHONMALLOC=malloc in the environment sends every object to malloc (the
# hard case); PYTHON names another interpreter.
set -euo pipefail
runs=${1:-5}
# The interpreter itself, not a wrapper (a pyenv shim would run bash first).
python=${PYTHON:-/usr/bin/python3}
here=$(cd "$(dirname "$0")" && pwd)
lib=""
for c in "${RUNFILES_DIR:-$0.runfiles}/alloctrace/tracer/capture/liballoctrace_capture.so" \
         "$here/liballoctrace_capture.so"; do
  if [ -f "$c" ]; then lib=$c; break; fi
done
[ -n "$lib" ] || { echo "measure_overhead: liballoctrace_capture.so not found" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
script='
import random
random.seed(1)
d = {}
for r in range(12):
    for i in range(100000):
        d[i] = [i] * (i % 40) + [str(i)]
    l = [bytearray(random.randrange(600, 4000)) for _ in range(20000)]
    s = {str(i) * 3: i for i in range(30000)}
    d.clear(); del l, s
'
time_one() {  # prints "wall cpu" in seconds
  local TIMEFORMAT='%R %U %S' t
  t=$( { time "$@" >/dev/null 2>&1; } 2>&1 )
  echo "$t" | awk '{printf "%.3f %.3f\n", $1, $2 + $3}'
}
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
ratio() { echo "$1 $2" | awk '{printf "%.4f\n", $1 / $2}'; }
declare -a rw rc sw sc
for i in $(seq "$runs"); do
  read -r pw pc < <(time_one env "$python" -c "$script")
  rm -f "$tmp"/c.*.trace "$tmp"/s.*.trace
  read -r cw cc < <(time_one env LD_PRELOAD="$lib" ALLOCTRACE_OUT="$tmp/c.%p.trace" "$python" -c "$script")
  read -r xw xc < <(time_one env LD_PRELOAD="$lib" ALLOCTRACE_CALL_SITES=8 ALLOCTRACE_OUT="$tmp/s.%p.trace" "$python" -c "$script")
  printf 'round %d: plain %s s wall %s s cpu; captured %s / %s; with call sites %s / %s\n' \
    "$i" "$pw" "$pc" "$cw" "$cc" "$xw" "$xc"
  rw+=("$(ratio "$cw" "$pw")"); rc+=("$(ratio "$cc" "$pc")")
  sw+=("$(ratio "$xw" "$cw")"); sc+=("$(ratio "$xc" "$cc")")
done
c=$(ls "$tmp"/c.*.trace | tail -1); s=$(ls "$tmp"/s.*.trace | tail -1)
printf 'captured / plain, medians of %d paired rounds: wall %sx, cpu %sx\n' "$runs" \
  "$(printf '%s\n' "${rw[@]}" | median)" "$(printf '%s\n' "${rc[@]}" | median)"
printf 'call sites / captured: wall %sx, cpu %sx; trace %s bytes, with call sites %s bytes\n' \
  "$(printf '%s\n' "${sw[@]}" | median)" "$(printf '%s\n' "${sc[@]}" | median)" \
  "$(stat -c %s "$c")" "$(stat -c %s "$s")"

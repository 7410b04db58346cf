#!/usr/bin/env bash
# Capture overhead on an allocation-heavy real program: python3 churning a
# dict of lists. Prints the median wall time of N runs without and with the
# preload library, and the ratio. Not a test (timings are machine-dependent).
#   bazel run //tracer/capture:measure_overhead [-- RUNS]
set -euo pipefail
runs=${1:-3}
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
time_one() {  # prints seconds
  local t0 t1
  t0=$(date +%s.%N)
  "$@" >/dev/null
  t1=$(date +%s.%N)
  echo "$t1 - $t0" | bc -l
}
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
plain=(); traced=()
for i in $(seq "$runs"); do  # interleaved, so drift hits both alike
  plain+=("$(time_one env "$python" -c "$script")")
  traced+=("$(time_one env LD_PRELOAD="$lib" ALLOCTRACE_OUT="$tmp/py.%p.trace" "$python" -c "$script")")
done
mp=$(printf '%s\n' "${plain[@]}" | median)
mt=$(printf '%s\n' "${traced[@]}" | median)
f=$(ls "$tmp"/py.*.trace | tail -1)
printf 'plain  runs: %s\n' "${plain[*]}"
printf 'traced runs: %s\n' "${traced[*]}"
printf 'median plain %.3f s, traced %.3f s, ratio %.2fx; last trace %s bytes\n' \
  "$mp" "$mt" "$(echo "$mt / $mp" | bc -l)" "$(stat -c %s "$f")"

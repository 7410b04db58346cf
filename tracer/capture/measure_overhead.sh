#!/usr/bin/env bash
# What recording costs a whole program, in paired rounds. Not a test
# (timings are machine-dependent).
#
#   bazel run //tracer/capture:measure_overhead [-- [RUNS] [--instrumented] [PROGRAM ARGS...]]
#
# Captured (the default): each round runs the program plain, captured
# (the capture library preloaded) and captured with call sites
# (ALLOCTRACE_CALL_SITES=8). --instrumented: the program's containers are
# on TraceAllocator, and each round runs it under ALLOCTRACE_POLICY=std
# (nothing recorded) and recorded. Without a PROGRAM: python3 churning a
# dict of lists (PYTHONMALLOC=malloc in the environment sends every object
# to malloc, the hard case; PYTHON names another interpreter).
#
# The runs of a round go in a rotating order, reversed every other round,
# so that each variant runs at even and odd places of the sequence of runs
# alike: successive processes can alternate between the machine's cores,
# and one core can be slower for minutes (docs/fidelity.md, "Where a run
# lands"). Prints each run's wall and CPU seconds, then per pair of
# variants the median of the per-round ratios and their range.
set -euo pipefail
runs=5
if [[ ${1:-} =~ ^[0-9]+$ ]]; then runs=$1; shift; fi
[ "$runs" -ge 1 ] || { echo "measure_overhead: RUNS must be at least 1" >&2; exit 2; }
instrumented=0
if [ "${1:-}" = "--instrumented" ]; then instrumented=1; shift; fi
if [[ ${1:-} == -* ]]; then
  echo "measure_overhead: unknown option $1 (usage: [RUNS] [--instrumented] [PROGRAM ARGS...])" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
lib=""
for c in "${RUNFILES_DIR:-$0.runfiles}/alloctrace/tracer/capture/liballoctrace_capture.so" \
         "$here/liballoctrace_capture.so"; do
  if [ -f "$c" ]; then lib=$c; break; fi
done
[ -n "$lib" ] || { echo "measure_overhead: liballoctrace_capture.so not found" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# bazel run starts in the runfiles tree; a relative PROGRAM is the caller's.
cd "${BUILD_WORKING_DIRECTORY:-.}"

if [ $# -gt 0 ]; then
  program=("$@")
  command -v "${program[0]}" >/dev/null ||
    { echo "measure_overhead: ${program[0]}: no such program" >&2; exit 2; }
elif [ $instrumented = 1 ]; then
  echo "measure_overhead: --instrumented needs a PROGRAM whose containers are on TraceAllocator" >&2
  exit 2
else
  # The interpreter itself, not a wrapper (a pyenv shim would run bash first).
  program=("${PYTHON:-/usr/bin/python3}" -c '
import random
random.seed(1)
d = {}
for r in range(12):
    for i in range(100000):
        d[i] = [i] * (i % 40) + [str(i)]
    l = [bytearray(random.randrange(600, 4000)) for _ in range(20000)]
    s = {str(i) * 3: i for i in range(30000)}
    d.clear(); del l, s
')
fi

# The variants: a name, then the environment it runs in.
if [ $instrumented = 1 ]; then
  names=(plain recorded)
  envs=("ALLOCTRACE_POLICY=std" "ALLOCTRACE_OUT=$tmp/recorded.trace")
else
  names=(plain captured sites)
  envs=("" "LD_PRELOAD=$lib ALLOCTRACE_OUT=$tmp/captured.%p.trace"
        "LD_PRELOAD=$lib ALLOCTRACE_CALL_SITES=8 ALLOCTRACE_OUT=$tmp/sites.%p.trace")
fi
n=${#names[@]}

run_one() {  # run_one ROUND VARIANT: sets W and C, its wall and CPU seconds
  local status=0 TIMEFORMAT='%R %U %S'
  rm -f "$tmp/${names[$2]}".*trace
  # shellcheck disable=SC2086  # the variant's environment splits into words
  { time env ${envs[$2]} "${program[@]}" >/dev/null 2>"$tmp/stderr" || status=$?; } 2>"$tmp/time"
  if [ $status -ne 0 ]; then
    echo "measure_overhead: ${program[0]} exited with status $status (round $1, ${names[$2]}); its stderr ends:" >&2
    tail -5 "$tmp/stderr" >&2
    exit 1
  fi
  read -r W C < <(awk '{printf "%.3f %.3f\n", $1, $2 + $3}' "$tmp/time")
}
summary() {  # median and range of the numbers on stdin, as "1.23x (1.10 to 1.40)"
  sort -g | awk '{a[NR]=$1} END {
    m = NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
    printf "%.3fx (%.3f to %.3f)", m, a[1], a[NR]}'
}

declare -A wall cpu
for r in $(seq 0 $((runs - 1))); do
  order=()
  for k in $(seq 0 $((n - 1))); do order+=($(( (k + r / 2) % n ))); done
  if [ $((r % 2)) = 1 ]; then
    for ((i = 0, j = n - 1; i < j; i++, j--)); do t=${order[i]}; order[i]=${order[j]}; order[j]=$t; done
  fi
  line="round $((r + 1)):"
  for v in "${order[@]}"; do
    run_one $((r + 1)) "$v"
    wall[$v,$r]=$W; cpu[$v,$r]=$C
    line+=" ${names[$v]} $W s wall $C s cpu;"
  done
  echo "${line%;}"
done

for v in $(seq 1 $((n - 1))); do
  b=$((v == 2 ? 1 : 0))  # call sites against the capture without them
  rw=$(for r in $(seq 0 $((runs - 1))); do echo "${wall[$v,$r]} ${wall[$b,$r]}" | awk '{print $1 / $2}'; done | summary)
  rc=$(for r in $(seq 0 $((runs - 1))); do echo "${cpu[$v,$r]} ${cpu[$b,$r]}" | awk '{print $1 / $2}'; done | summary)
  traces=("$tmp/${names[$v]}".*trace)  # the last run's, one per process
  size=""
  [ -f "${traces[0]}" ] && size="; trace $(stat -c %s "${traces[@]}" | awk '{s += $1} END {print s}') bytes"
  echo "${names[$v]} / ${names[$b]}, $runs paired rounds: wall $rw, cpu $rc$size"
done

#!/usr/bin/env bash
# Re-records checked-in sample traces in traces/, one per workload at its
# default size with seed 1, and prints a table of what each holds.
#   tools/make_traces.sh                 every workload of `record --list`
#   tools/make_traces.sh NAME...         only these
# The shared_ptr workloads under libc++ are made by tools/record_libcxx.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
bazel build //tracer:record //inspect >/dev/null 2>&1
if [ "$#" -gt 0 ]; then
  workloads="$*"
else
  workloads=$(bazel run //tracer:record -- --list 2>/dev/null | grep -E '^[a-z_]+$')
fi
printf '| trace | events | bytes | bytes/event | peak live bytes | peak live objects | arenas |\n'
printf '|---|---:|---:|---:|---:|---:|---:|\n'
for w in $workloads; do
  bazel run //tracer:record -- --workload="$w" --seed=1 --out="traces/$w.trace" >/dev/null 2>&1
  bazel run //inspect -- --json "traces/$w.trace" 2>/dev/null | python3 -c '
import json, sys
s = json.load(sys.stdin)
print("| `%s.trace` | %d | %d | %.2f | %d | %d | %d |" % (s["workload"], s["events"],
      s["file_bytes"], s["bytes_per_event"], s["peak_live_bytes"], s["peak_live_objects"],
      s["arenas_created"]))'
done

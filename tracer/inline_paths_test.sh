#!/usr/bin/env bash
# Each binary given: the recorder's event paths (Recorder::TryStage, the
# Record*/CreateArena/DestroyArena wrappers around it and their lambdas, and
# the capture's RecordBytes and FreeImpl around those) are inline in their
# callers, never a function of their own. A compiler may leave a template
# or lambda out of line in a binary with many allocator types, a call with
# its saved registers on every event; the paths are marked always inline,
# and this fails if one is not.
set -uo pipefail
command -v nm >/dev/null || {
  echo "FAIL: nm (binutils) not found"
  exit 1
}
status=0
for bin in "$@"; do
  symbols=$(nm -C "$bin") || {
    echo "FAIL: nm could not read $bin"
    exit 1
  }
  [ -n "$symbols" ] || {
    echo "FAIL: $bin has no symbol table"
    exit 1
  }
  out_of_line=$(grep -E 'alloctrace::Recorder::(TryStage|RecordAllocation|RecordCalloc|RecordFree|CreateArena|DestroyArena|FillAllocation|FillFree)\b|capture_internal::\(anonymous namespace\)::(RecordBytes|FreeImpl)\b' <<<"$symbols" |
    grep -v -E 'Recorder::[A-Za-z]+Slow\(')
  if [ -n "$out_of_line" ]; then
    echo "FAIL: $bin has event paths out of line:"
    echo "$out_of_line"
    status=1
  fi
  # The check would pass on a binary that records nothing: the slow paths
  # must be there, so the fast ones were compiled in.
  grep -q 'alloctrace::Recorder::RecordAllocationSlow(' <<<"$symbols" ||
    {
      echo "FAIL: $bin does not record (no Recorder::RecordAllocationSlow)"
      status=1
    }
done
[ "$status" -eq 0 ] && echo "PASS"
exit "$status"

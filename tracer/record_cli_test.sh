#!/usr/bin/env bash
# record ($1): a misspelled workload gets the nearest name, one far from
# every name gets the list; a --param without a value says so; all exit 2
# and write nothing. An --out that cannot take the trace is refused before
# the workload runs (exit 1), and a FIFO no one reads fails at once rather
# than wait for a reader.
set -uo pipefail
record=$1
tmp=${TEST_TMPDIR:-$(mktemp -d)}
fail() {
  echo "FAIL: $*"
  exit 1
}

# refused CASE STATUS PATTERN TRACE ARGS...: record ARGS exits STATUS, its
# stderr matches the grep PATTERN, and TRACE was not written.
refused() {
  local what=$1 status=$2 pattern=$3 trace=$4 code
  shift 4
  "$record" "$@" 2>"$tmp/err"
  code=$?
  [ "$code" -eq "$status" ] || fail "$what: exit $code, not $status"
  grep -q -- "$pattern" "$tmp/err" || fail "$what: $(cat "$tmp/err")"
  [ -e "$trace" ] && fail "$what: a trace was written"
  return 0
}

refused "a misspelled workload" 2 \
  "^record: unknown workload 'simple_mapp'; did you mean simple_map?$" \
  "$tmp/a.trace" --workload=simple_mapp --out="$tmp/a.trace"
refused "an unknown workload" 2 "^record: unknown workload 'zzzz' (known: simple_map, " \
  "$tmp/b.trace" --workload=zzzz --out="$tmp/b.trace"
refused "--param without a value" 2 "^record: --param needs a value (--param=name=value)$" \
  "$tmp/c.trace" --workload=simple_map --out="$tmp/c.trace" --param=entries=10 --param
refused "--param before another flag" 2 "^record: --param needs a value (--param=name=value)$" \
  "$tmp/c.trace" --workload=simple_map --out="$tmp/c.trace" --param --seed=3
refused "--out in a missing directory" 1 \
  "^record: cannot write $tmp/no/such/dir/d.trace: .*; nothing recorded$" \
  "$tmp/no/such/dir/d.trace" --workload=simple_map --out="$tmp/no/such/dir/d.trace"
mkfifo "$tmp/pipe"
timeout 60 "$record" --workload=simple_map --out="$tmp/pipe" 2>"$tmp/err"
code=$?
[ "$code" -eq 1 ] || fail "--out a FIFO with no reader: exit $code, not 1"
grep -q "a FIFO with no reader" "$tmp/err" || fail "--out a FIFO with no reader: $(cat "$tmp/err")"
echo "PASS"

#!/usr/bin/env bash
# record ($1): a misspelled workload gets the nearest name, one far from
# every name gets the list; both exit 2 and write nothing.
set -uo pipefail
record=$1
tmp=${TEST_TMPDIR:-$(mktemp -d)}
fail() {
  echo "FAIL: $*"
  exit 1
}

"$record" --workload=simple_mapp --out="$tmp/a.trace" 2>"$tmp/err"
code=$?
[ "$code" -eq 2 ] || fail "a misspelled workload: exit $code, not 2"
[ "$(cat "$tmp/err")" = "record: unknown workload 'simple_mapp'; did you mean simple_map?" ] ||
  fail "a misspelled workload: $(cat "$tmp/err")"
[ -e "$tmp/a.trace" ] && fail "a trace was written"

"$record" --workload=zzzz --out="$tmp/b.trace" 2>"$tmp/err"
code=$?
[ "$code" -eq 2 ] || fail "an unknown workload: exit $code, not 2"
grep -q "^record: unknown workload 'zzzz' (known: simple_map, " "$tmp/err" ||
  fail "an unknown workload: $(cat "$tmp/err")"
echo "PASS"

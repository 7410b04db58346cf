#!/usr/bin/env bash
# inspect ($1) on a trace ($2, of several chunks), whole and cut short: a
# trace cut after some chunks is shown as far as it goes, marked INCOMPLETE,
# exit 0; one cut inside its first chunk holds nothing to show: an error
# naming the file and the byte, exit 1; so is a trace cut inside its header
# or with a header that no longer parses.
set -uo pipefail
inspect=$1
trace=$2
tmp=${TEST_TMPDIR:-$(mktemp -d)}
fail() {
  echo "FAIL: $*"
  exit 1
}

out=$("$inspect" "$trace" 2>"$tmp/err") || fail "a whole trace: exit $?: $(cat "$tmp/err")"
grep -q "INCOMPLETE" <<<"$out" && fail "a whole trace is marked INCOMPLETE"

head -c 5000 "$trace" >"$tmp/partly.trace"
out=$("$inspect" "$tmp/partly.trace" 2>"$tmp/err") || fail "a partly cut trace: exit $?"
grep -q "^INCOMPLETE: file ends inside the packet at byte " <<<"$out" ||
  fail "a partly cut trace is not marked INCOMPLETE: $out"
grep -q "inspect: warning: file ends inside the packet" "$tmp/err" ||
  fail "no warning for a partly cut trace: $(cat "$tmp/err")"

head -c 240 "$trace" >"$tmp/first.trace"
"$inspect" "$tmp/first.trace" >/dev/null 2>"$tmp/err"
code=$?
[ "$code" -eq 1 ] || fail "a trace cut inside its first chunk: exit $code, not 1"
grep -q "first.trace: truncated: .*; no complete chunk before the cut" "$tmp/err" ||
  fail "a trace cut inside its first chunk: $(cat "$tmp/err")"
head -c 100 "$trace" >"$tmp/header.trace"
"$inspect" "$tmp/header.trace" >/dev/null 2>"$tmp/err" && fail "a trace cut inside its header: exit 0"
grep -q "header.trace: truncated inside its header: file ends inside the packet at byte 0" \
  "$tmp/err" || fail "a trace cut inside its header: $(cat "$tmp/err")"

cp "$trace" "$tmp/damaged.trace"
chmod u+w "$tmp/damaged.trace"
printf '\xff\xff\xff\xff' | dd of="$tmp/damaged.trace" bs=1 seek=20 conv=notrunc 2>/dev/null
"$inspect" "$tmp/damaged.trace" >/dev/null 2>"$tmp/err" && fail "a damaged header: exit 0"
[ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "a damaged header: more than one line: $(cat "$tmp/err")"
grep -q "damaged.trace: damaged header: the packet at byte 0" "$tmp/err" ||
  fail "a damaged header: $(cat "$tmp/err")"
echo "PASS"

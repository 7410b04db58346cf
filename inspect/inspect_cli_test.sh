#!/usr/bin/env bash
# inspect ($1) on a trace ($2, of several chunks), whole and cut short: a
# trace cut after some chunks is shown as far as it goes, marked INCOMPLETE,
# exit 0; one cut inside its first chunk holds nothing to show: an error
# naming the file and the byte, exit 1; so is a trace cut inside its header
# or with a header that no longer parses. Then a trace this build writes
# (by $3, format/hostile_trace.h: its chunks carry checksums) with one
# byte changed inside a chunk: the checksum's error, exit 1. Outputs that
# name the trace or a directory, and a FIFO as the trace, are errors too.
set -uo pipefail
inspect=$1
trace=$2
write_trace=$3
tmp=${TEST_TMPDIR:-$(mktemp -d)}
fail() {
  echo "FAIL: $*"
  exit 1
}

out=$("$inspect" "$trace" 2>"$tmp/err") || fail "a whole trace: exit $?: $(cat "$tmp/err")"
grep -q "INCOMPLETE" <<<"$out" && fail "a whole trace is marked INCOMPLETE"
grep -q "^checksums: none (written before them)" <<<"$out" ||
  fail "a trace written before checksums does not say it has none: $out"

head -c 5000 "$trace" >"$tmp/partly.trace"
out=$("$inspect" "$tmp/partly.trace" 2>"$tmp/err") || fail "a partly cut trace: exit $?"
grep -q "^INCOMPLETE: file ends inside the packet at byte " <<<"$out" ||
  fail "a partly cut trace is not marked INCOMPLETE: $out"
grep -q "inspect: warning: .*partly.trace: file ends inside the packet" "$tmp/err" ||
  fail "no warning for a partly cut trace: $(cat "$tmp/err")"

head -c 240 "$trace" >"$tmp/first.trace"
"$inspect" "$tmp/first.trace" >/dev/null 2>"$tmp/err"
code=$?
[ "$code" -eq 1 ] || fail "a trace cut inside its first chunk: exit $code, not 1"
grep -q "first.trace: truncated: .*; no complete chunk before the cut" "$tmp/err" ||
  fail "a trace cut inside its first chunk: $(cat "$tmp/err")"
# ... and writes no report: an --out file already there is left as it was.
echo "an earlier report" >"$tmp/kept.txt"
"$inspect" --out="$tmp/kept.txt" "$tmp/first.trace" 2>/dev/null && fail "--out, cut in the first chunk: exit 0"
[ "$(cat "$tmp/kept.txt")" = "an earlier report" ] ||
  fail "a trace cut inside its first chunk replaced the --out file: $(head -3 "$tmp/kept.txt")"
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

# An --out (or --classes_out) that names the trace itself, however
# spelled, is refused before anything is written: exit 2, the trace intact.
cp "$trace" "$tmp/self.trace"
chmod u+w "$tmp/self.trace"
for flag in "--out=$tmp/self.trace" "--out=$tmp/./self.trace" "--sites=2 --classes_out=$tmp/self.trace"; do
  # shellcheck disable=SC2086  # $flag is one or two flags
  "$inspect" $flag "$tmp/self.trace" >/dev/null 2>"$tmp/err"
  code=$?
  [ "$code" -eq 2 ] || fail "$flag on the trace itself: exit $code, not 2: $(cat "$tmp/err")"
  grep -q "self.trace.* is being read: writing there would destroy it" "$tmp/err" || fail "$flag: $(cat "$tmp/err")"
  cmp -s "$trace" "$tmp/self.trace" || fail "$flag changed the trace it read"
done
# --sites on a trace recorded without call sites: nothing to list, an error
# on stderr and status 1, with --classes_out or without.
for flag in "--sites=3" "--sites=3 --classes_out=$tmp/classes.trace"; do
  # shellcheck disable=SC2086  # $flag is one or two flags
  out=$("$inspect" $flag "$trace" 2>"$tmp/err")
  code=$?
  [ "$code" -eq 1 ] || fail "$flag on a trace without call sites: exit $code, not 1"
  [ -z "$out" ] || fail "$flag on a trace without call sites printed: $out"
  grep -q "the trace has no call sites (capture --call_sites=N records them)" "$tmp/err" ||
    fail "$flag: $(cat "$tmp/err")"
done
[ -e "$tmp/classes.trace" ] && fail "--classes_out written for a trace without call sites"
# A directory where the report would go: said before the trace is read.
"$inspect" --out="$tmp" "$trace" >/dev/null 2>"$tmp/err" && fail "--out=a directory: exit 0"
grep -q "is a directory, not a file to write" "$tmp/err" || fail "--out=a directory: $(cat "$tmp/err")"
# A FIFO where the trace should be: an error, not a wait for a writer.
mkfifo "$tmp/fifo.trace"
timeout 20 "$inspect" "$tmp/fifo.trace" >/dev/null 2>"$tmp/err"
code=$?
[ "$code" -eq 1 ] || fail "a FIFO as the trace: exit $code, not 1 (124: it waited)"
grep -q "fifo.trace: not a regular file (a FIFO)" "$tmp/err" || fail "a FIFO: $(cat "$tmp/err")"

"$write_trace" "$tmp/written.trace" || fail "cannot write a trace"
out=$("$inspect" "$tmp/written.trace" 2>"$tmp/err") || fail "a written trace: $(cat "$tmp/err")"
grep -q "^checksums: header, every chunk and footer, each verified$" <<<"$out" ||
  fail "a written trace does not say its checksums: $out"
# One byte in the middle of the file (inside a chunk of ops) xor 0x20.
cp "$tmp/written.trace" "$tmp/flipped.trace"
middle=$(($(stat -c %s "$tmp/flipped.trace") / 2))
byte=$(od -An -tu1 -j "$middle" -N1 "$tmp/flipped.trace" | tr -d ' ')
printf "$(printf '\\%03o' $((byte ^ 0x20)))" |
  dd of="$tmp/flipped.trace" bs=1 seek="$middle" conv=notrunc 2>/dev/null
cmp -s "$tmp/written.trace" "$tmp/flipped.trace" && fail "the byte was not changed"
"$inspect" "$tmp/flipped.trace" >/dev/null 2>"$tmp/err"
code=$?
echo "a changed byte at $middle: exit $code: $(cat "$tmp/err")"
[ "$code" -eq 1 ] || fail "a changed byte in a chunk: exit $code, not 1"
[ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "a changed byte: more than one line: $(cat "$tmp/err")"
grep -Eq "flipped.trace: byte [0-9]+ \(chunk [0-9]+\): checksum mismatch: the chunk's bytes changed after they were written \(stored 0x[0-9a-f]{8}, computed 0x[0-9a-f]{8}\)$" \
  "$tmp/err" || fail "a changed byte in a chunk: $(cat "$tmp/err")"
echo "PASS"

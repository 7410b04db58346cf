#!/usr/bin/env bash
# memory_noise ($1): a short run prints a row per buffer size with its
# figures; a bad argument is refused with exit status 2 and the usage.
set -euo pipefail
bin=$1
out=$("$bin" --mib=2 --loads=2000 --samples=300)
echo "$out"
grep -q "^memory_noise: 300 samples of 2000 dependent loads per buffer size$" <<<"$out" ||
  { echo "FAIL: no header line"; exit 1; }
# "    2 MiB      16.2   0.098    0.5%  0.11@1ms ..." with positive numbers.
grep -Eq "^ +2 MiB +[0-9]+\.[0-9] +[0-9]+\.[0-9]{3} +[0-9]+\.[0-9]% +-?[0-9]\.[0-9]{2}@[0-9]+ms" <<<"$out" ||
  { echo "FAIL: no row for 2 MiB"; exit 1; }
for bad in --mib=0 --mib=100000 --samples=10 --loads=x --bogus; do
  set +e
  err=$("$bin" "$bad" 2>&1 >/dev/null)
  code=$?
  set -e
  [ "$code" -eq 2 ] || { echo "FAIL: $bad exited $code, not 2"; exit 1; }
  grep -q "^memory_noise: " <<<"$err" || { echo "FAIL: $bad said nothing: $err"; exit 1; }
done
echo PASS

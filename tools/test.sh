#!/usr/bin/env bash
# Sets up the machine, then runs every test twice: as built for use
# (optimized) and under AddressSanitizer + UndefinedBehaviorSanitizer.
# Ends with one line "N passed, N failed" counting test cases (from each
# test's JUnit XML), or test targets where a target produced no XML.
set -uo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh --with-browser || exit 1  # Chromium: //report:browser_test

passed=0
failed=0
overall=0

count_results() {  # $1: label; reads bazel's testlogs of the last run
  local logs xml t f e
  logs=$(bazel info bazel-testlogs "$@" 2>/dev/null)
  while IFS= read -r xml; do
    # The first <testsuites ...> line carries the totals.
    line=$(grep -m1 '<testsuites' "$xml" || true)
    t=$(sed -n 's/.*tests="\([0-9]*\)".*/\1/p' <<<"$line")
    f=$(sed -n 's/.*failures="\([0-9]*\)".*/\1/p' <<<"$line")
    e=$(sed -n 's/.*errors="\([0-9]*\)".*/\1/p' <<<"$line")
    t=${t:-0}; f=${f:-0}; e=${e:-0}
    passed=$((passed + t - f - e))
    failed=$((failed + f + e))
  done < <(find -L "$logs" -name test.xml 2>/dev/null)
}

run_suite() {  # $@: extra bazel flags
  echo "== bazel test $* //..."
  rm -rf "$(bazel info bazel-testlogs "$@" 2>/dev/null)"
  bazel test "$@" --test_output=errors //...
  local rc=$?
  local before=$failed
  count_results "$@"
  if [ $rc -ne 0 ]; then
    overall=1
    # A target that failed to build or crashed without XML still counts.
    [ "$failed" -eq "$before" ] && failed=$((failed + 1))
  fi
}

run_suite
run_suite --config=asan

echo "${passed} passed, ${failed} failed"
exit $overall

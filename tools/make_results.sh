#!/usr/bin/env bash
# Regenerates docs/replay_results.md: every checked-in trace through the
# default policy set, then the whole grid (--policies='*') on three traces,
# each policy run until its 95% CIs are within +-3% or its budget is spent.
# Run it on a quiet machine: the file records the machine and the noise
# floor it measured. Takes 10 to 30 minutes on 2 cores.
#
#   tools/make_results.sh            # the defaults, as docs/usage.md states
#   REPLAYER_FLAGS='--budget=1' tools/make_results.sh   # a quicker check
#   REPLAYER_BIN=path/to/replayer tools/make_results.sh  # without building
#
# Exit status: the replayer's (3 if a policy FAILED; the file is written).
set -uo pipefail
cd "$(dirname "$0")/.."
export LC_ALL=C  # trace order by byte

replayer=bazel-bin/replayer/replayer
if [ -n "${REPLAYER_BIN:-}" ]; then
  replayer=$REPLAYER_BIN  # a replayer built elsewhere
else
  bazel build -c opt --color=no --curses=no //replayer >/dev/null 2>&1 || {
    echo "make_results: bazel build //replayer failed" >&2
    exit 1
  }
fi
extra=${REPLAYER_FLAGS:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

status=0
# shellcheck disable=SC2086  # $extra is a list of flags
"$replayer" --quiet $extra --format=markdown --out="$tmp/default.md" traces/*.trace || status=$?
[ -s "$tmp/default.md" ] || exit "$status"
grid_traces=(traces/simple_map.trace traces/random.trace traces/list_churn.trace)
# shellcheck disable=SC2086
"$replayer" --quiet $extra --policies='*' --format=markdown --out="$tmp/grid.md" \
  "${grid_traces[@]}" || { rc=$?; [ "$status" -ne 0 ] || status=$rc; }
[ -s "$tmp/grid.md" ] || exit "$status"

out=docs/replay_results.md
{
  echo "# Replay results, every checked-in trace"
  echo
  echo "Made by \`tools/make_results.sh\`${extra:+ with REPLAYER_FLAGS='$extra'} (the machine and"
  echo "date are at the end of each section). Each policy runs in fresh processes,"
  echo "in rounds of shuffled order with glibc malloc in every round; the race"
  echo "eliminates a policy once it is shown slower than its leader (marked x, with"
  echo "why), the others run until the 95% CI of their median ns/op and of their"
  echo "ratio to malloc are within +-3% or the trace's total budget is spent; a"
  echo "row marked ! says how far it got. A difference is a"
  echo "finding only where the intervals do not overlap; the noise floor (malloc"
  echo "against a second malloc run set) says how far apart two identical"
  echo "allocators read on the machine. Regenerate with the same command."
  echo
  echo "## Every checked-in trace, the default set"
  echo
  echo "Baselines (not bump), tcmalloc, jemalloc, mimalloc, slab and small_node (st, both"
  echo "holdings), and the article grid, which races with them: of each storage kind,"
  echo "the fastest that frees its blocks and the fastest that never frees stay"
  echo "contenders."
  echo "\`replayer${extra:+ $extra} --format=markdown traces/*.trace\`"
  echo
  cat "$tmp/default.md"
  echo
  echo "## The whole grid on three traces"
  echo
  echo "Every policy, the 48 article policies and bump included."
  echo "\`replayer${extra:+ $extra} --policies='*' --format=markdown ${grid_traces[*]}\`"
  echo
  cat "$tmp/grid.md"
} >"$out.tmp" && mv "$out.tmp" "$out"
echo "make_results: wrote $out" >&2
exit "$status"

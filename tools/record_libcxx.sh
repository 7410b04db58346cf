#!/usr/bin/env bash
# Records the shared_ptr article's three workloads under libc++ into
# traces/NAME_libcxx.trace, at the defaults of `record --list` and seed 1.
#
# The record program cannot be built against libc++ here: Debian's protobuf
# and Abseil are built against libstdc++, and their functions take
# std::string, which libc++ spells std::__1::basic_string, so a libc++ record
# fails to link. So the workloads run in stdlib_events (no recorder, Abseil or
# protobuf), compiled with clang++ -stdlib=libc++, which writes each
# allocation event as a line; events_to_trace (built as usual) records those
# lines into a trace whose header says stdlib=libc++.
# Needs: clang, libc++-dev, libc++abi-dev (apt-get install).
set -euo pipefail
cd "$(dirname "$0")/.."
for tool in clang++; do
  command -v "$tool" >/dev/null || { echo "record_libcxx: $tool not found (apt-get install clang libc++-dev libc++abi-dev)" >&2; exit 1; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
clang++ -std=c++17 -stdlib=libc++ -O2 -I. tracer/workloads/stdlib_events_main.cc \
  -o "$tmp/stdlib_events_libcxx"
bazel build //tracer/workloads:events_to_trace >/dev/null 2>&1
seed=1 lists=100 nodes=10000 iterations=100 inserts=100  # record --list defaults
for w in shared_ptr_new make_shared allocate_shared; do
  "$tmp/stdlib_events_libcxx" "$w" "$seed" "$lists" "$nodes" "$iterations" "$inserts" "$tmp/$w.events"
  bazel-bin/tracer/workloads/events_to_trace --in="$tmp/$w.events" --out="traces/${w}_libcxx.trace"
done

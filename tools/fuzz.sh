#!/usr/bin/env bash
# Runs libFuzzer over the trace reader and the replay-program builder
# (replayer/engine/replay_program_fuzzer.cc), seeded with traces/*.trace and the
# crafted traces in format/testdata/.
#
#   tools/fuzz.sh                 # 10^6 executions
#   tools/fuzz.sh -runs=100000    # any libFuzzer flags
#
# Builds with clang in an output base of its own, so the default (gcc)
# build is not invalidated. New inputs that add coverage go to
# /tmp/alloctrace-fuzz-corpus; a crash leaves crash-* in the current
# directory, which replay_program_fuzz_test replays:
#   bazel run //replayer/engine:replay_program_fuzz_test -- $PWD/crash-...
set -euo pipefail
cd "$(dirname "$0")/.."
output_base="${ALLOCTRACE_FUZZ_OUTPUT_BASE:-$HOME/.cache/alloctrace-fuzz}"
bazel --output_base="$output_base" build --config=fuzz --color=no --curses=no \
  //replayer/engine:replay_program_fuzzer >&2
bin="$(bazel --output_base="$output_base" info --config=fuzz bazel-bin 2>/dev/null)"
corpus=/tmp/alloctrace-fuzz-corpus
mkdir -p "$corpus"
args=("$@")
if [ ${#args[@]} -eq 0 ]; then args=(-runs=1000000); fi
# -max_len: inputs are cut to 8 KiB (the sample traces' first chunks): every
# edge of the format is within reach, and an execution takes ~1 ms, not 50.
exec "$bin/replayer/engine/replay_program_fuzzer" -rss_limit_mb=2048 -timeout=10 -max_len=8192 \
  -print_final_stats=1 "${args[@]}" "$corpus" format/testdata traces

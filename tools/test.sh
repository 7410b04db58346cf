#!/usr/bin/env bash
# Runs every test as built for use (optimized),
# and again under AddressSanitizer + UndefinedBehaviorSanitizer every test
# but those tagged opt_only (text and Python checks, the browser, the
# in-situ fidelity runs and the replayer's end-to-end tests: they reach no
# C++ that a sanitized unit test does not, or only re-run it in child
# processes at many times the cost); the sanitized pass builds only what
# its tests need, at -O0 (.bazelrc). Then builds and runs the examples/
# projects against alloctrace, and checks the docs and the architecture.
# Ends with one line "N passed, N failed" counting test cases (from each
# test's JUnit XML), or test targets where a target produced no XML, plus
# one per example step and one for the docs' links.
#
# The packages come from tools/setup.sh --with-browser (Chromium for
# //charts:browser_test); this script installs nothing.
#
# tools/test.sh --unit runs the unit tests only (size small: no whole
# program, no browser, no example project), optimized, in seconds after
# the build, with the same closing line.
set -uo pipefail
cd "$(dirname "$0")/.."

passed=0
failed=0
overall=0

count_results() {  # $1: label; reads bazel's testlogs of the last run
  local logs xml t f e
  logs=$(bazel info bazel-testlogs "$@" 2>/dev/null)
  while IFS= read -r xml; do
    # GoogleTest's first <testsuites ...> line carries the totals; the XML
    # Bazel writes for a shell test has a bare <testsuites> and the counts
    # on its one <testsuite ...> line.
    line=$(grep -m1 '<testsuites' "$xml" || true)
    grep -q 'tests="' <<<"$line" || line=$(grep -m1 '<testsuite ' "$xml" || true)
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
  local t0=$SECONDS
  rm -rf "$(bazel info bazel-testlogs "$@" 2>/dev/null)"
  bazel test "$@" --test_output=errors //...
  local rc=$?
  echo "-- $((SECONDS - t0)) s"
  local before=$failed
  count_results "$@"
  if [ $rc -ne 0 ]; then
    overall=1
    # A target that failed to build or crashed without XML still counts.
    [ "$failed" -eq "$before" ] && failed=$((failed + 1))
  fi
}

# The two ways into a project of one's own (docs/building.md, "Use it in
# your project"), run as that page says: a separate Bazel workspace
# (examples/bazel) and the installed CMake package (examples/cmake, then a
# plain compiler line through pkg-config). Each app records a std::map and uses
# SlabAllocator; //inspect must read its trace as complete. One test
# each; on failure the step's log is shown.
run_examples() {
  local tmp
  tmp=$(mktemp -d)
  example "examples/bazel" "$tmp/bazel_app.trace" bash -c '
    (cd examples/bazel && bazel run --color=no --curses=no --symlink_prefix=/ //:app -- "$1")
    rc=$?
    (cd examples/bazel && bazel shutdown)  # the nested workspace has its own server
    exit $rc' _ "$tmp/bazel_app.trace"
  # Built without optimization (build type None: no build-type flags): the
  # step checks the package and its programs, not their speed, and compiles
  # in about three quarters of the time a Release build takes. The build
  # directory is inside the clone (build/, ignored by git) and, where ccache
  # is installed (tools/setup.sh installs it) and its cache directory
  # writable, every compile goes through it with paths made relative to the
  # clone: a second clone on the same machine reuses the first one's
  # objects, as Bazel reuses its own cache.
  example "examples/cmake" "$tmp/cmake_app.trace" bash -c '
    set -e
    launcher=()
    cache=${CCACHE_DIR:-$HOME/.cache/ccache}
    if command -v ccache >/dev/null && mkdir -p "$cache" 2>/dev/null && [ -w "$cache" ]; then
      export CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=true
      launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
    fi
    rm -rf build/test_sh_cmake
    cmake -S . -B build/test_sh_cmake -DCMAKE_BUILD_TYPE=None "${launcher[@]}"
    cmake --build build/test_sh_cmake -j2
    cmake --install build/test_sh_cmake --prefix "$1/prefix"
    rm -rf build/test_sh_cmake
    cmake -S examples/cmake -B "$1/example" -DCMAKE_PREFIX_PATH="$1/prefix"
    cmake --build "$1/example" -j2
    "$1/example/app" "$1/cmake_app.trace"' _ "$tmp"
  example "pkg-config" "$tmp/pkgconfig_app.trace" bash -c '
    set -e
    export PKG_CONFIG_PATH="$1/prefix/lib/pkgconfig"
    g++ -O2 -o "$1/pkgconfig_app" examples/cmake/app.cc \
      $(pkg-config --cflags --libs alloctrace) -Wl,-rpath,"$1/prefix/lib"
    "$1/pkgconfig_app" "$1/pkgconfig_app.trace"' _ "$tmp"
  # The installed programs, as one without Bazel runs them (README, "Without
  # Bazel"): record a workload, inspect it, replay it (and run a program in
  # situ, which needs the helpers in libexec/alloctrace/), capture a program
  # (which needs lib/liballoctrace_capture.so) and inspect its trace.
  step "installed alloctrace_record" bash -c '
    set -e
    "$1/prefix/bin/alloctrace_record" --workload=simple_map --param=entries=2000 \
      --out="$1/record.trace"' _ "$tmp"
  step "installed alloctrace_inspect" bash -c '
    set -e
    "$1/prefix/bin/alloctrace_inspect" "$1/record.trace" >"$1/record.inspect"
    grep -E "^complete" "$1/record.inspect"' _ "$tmp"
  step "installed alloctrace_replayer" bash -c '
    set -e
    absent() { ! grep -E "$@"; }  # fails if a line matches
    bin="$1/prefix/bin"
    "$bin/alloctrace_replayer" --policies=malloc,slab/st/single --budget=1 --min_runs=3 \
      --quiet "$1/record.trace" >"$1/replay.txt"
    grep -q "^ *slab/st/single " "$1/replay.txt"
    "$bin/alloctrace_replayer" --in_situ --policies=jemalloc --budget=0.5 --min_runs=2 \
      --max_runs=3 --quiet --in_situ_log="$1/in_situ.log" -- ls / >"$1/in_situ.txt"
    cat "$1/in_situ.txt"
    grep -q "^jemalloc " "$1/in_situ.txt"
    absent -q skipped "$1/in_situ.txt"  # the preload check library was found
    grep -m1 "^malloc " "$1/replay.txt"' _ "$tmp"
  step "installed alloctrace_capture" bash -c '
    set -e
    bin="$1/prefix/bin"
    "$bin/alloctrace_capture" --out="$1/ls.trace" -- ls / >/dev/null
    "$bin/alloctrace_inspect" "$1/ls.trace" >"$1/ls.inspect"
    grep -q "workload \"ls\"" "$1/ls.inspect"
    grep -E "^complete" "$1/ls.inspect"' _ "$tmp"
  # The pool alone (examples/pool_only): by find_package(alloctrace
  # COMPONENTS pool) with Protobuf made unfindable, and by pkg-config
  # alloctrace-pool; neither its flags, the headers it reaches nor its
  # program may involve protobuf or the tracing library. Bazel's //pool
  # likewise.
  step "examples/pool_only, CMake without Protobuf" bash -c '
    set -e
    absent() { ! grep -E "$@"; }
    cmake -S examples/pool_only -B "$1/pool_only" -DCMAKE_PREFIX_PATH="$1/prefix" \
      -DCMAKE_DISABLE_FIND_PACKAGE_Protobuf=ON
    cmake --build "$1/pool_only" -j2
    readelf -d "$1/pool_only/pool_app" | absent "NEEDED.*(protobuf|alloctrace\.so)"
    "$1/pool_only/pool_app"' _ "$tmp"
  step "pkg-config alloctrace-pool" bash -c '
    set -e
    absent() { ! grep -E "$@"; }
    export PKG_CONFIG_PATH="$1/prefix/lib/pkgconfig"
    flags=$(pkg-config --cflags --libs alloctrace-pool)
    echo "$flags"
    absent "protobuf|-lalloctrace( |$)" <<<"$flags"
    g++ -std=c++17 -M examples/pool_only/main.cc $(pkg-config --cflags alloctrace-pool) |
      absent "google/protobuf|alloctrace/(tracer|format|proto)/"
    g++ -std=c++17 -O2 -o "$1/pool_pc_app" examples/pool_only/main.cc $flags \
      -Wl,-rpath,"$1/prefix/lib"
    readelf -d "$1/pool_pc_app" | absent "NEEDED.*(protobuf|alloctrace\.so)"
    "$1/pool_pc_app"' _ "$tmp"
  step "//pool depends on no tracing" bash -c '
    set -e
    absent() { ! grep -E "$@"; }
    bazel query "deps(//pool)" >"$1/pool_deps"
    absent "protobuf|^//(tracer|format|proto|inspect|replayer)" "$1/pool_deps"
    echo "//pool: $(grep -c "^//" "$1/pool_deps") targets of the project, none of tracing"' _ "$tmp"
  # Every policy's C++ type as the reports print it (replayer/verdict/catalog_types.cc),
  # compiled against the installed package and run: what a user pastes builds.
  step "catalog types, installed package" bash -c '
    set -e
    export PKG_CONFIG_PATH="$1/prefix/lib/pkgconfig"
    g++ -std=c++17 -O1 -o "$1/catalog_types" replayer/verdict/catalog_types.cc \
      $(pkg-config --cflags --libs alloctrace) -Wl,-rpath,"$1/prefix/lib"
    "$1/catalog_types"' _ "$tmp"
  rm -rf "$tmp"
}

step() {  # $1: name, rest: the command; passes if it exits 0
  local name=$1
  shift
  STEP_LOG=$(mktemp)
  echo "== $name"
  local t0=$SECONDS
  if "$@" >"$STEP_LOG" 2>&1; then
    tail -n 1 "$STEP_LOG"
    echo "-- $((SECONDS - t0)) s"
    passed=$((passed + 1))
  else
    tail -n 40 "$STEP_LOG"
    echo "FAILED: $name"
    failed=$((failed + 1))
    overall=1
  fi
  rm -f "$STEP_LOG"
}

example() {  # $1: name, $2: the trace it writes, rest: the command
  local name=$1 trace=$2
  shift 2
  # The app runs, inspect reads its trace as complete; the app's lines and
  # inspect's verdict are shown.
  step "$name" bash -c '
    trace=$1
    shift
    "$@" && bazel run --color=no --curses=no //inspect -- "$trace" >"$trace.inspect" &&
      grep -q "^complete" "$trace.inspect" && grep -E "^complete" "$trace.inspect"' \
    _ "$trace" "$@"
}

if [ "${1:-}" = "--unit" ]; then
  run_suite --test_size_filters=small
  echo "${passed} passed, ${failed} failed"
  exit $overall
fi

run_suite
run_suite --config=asan --build_tests_only --test_tag_filters=-opt_only
run_examples
# Every link in README.md and docs/ names a file of the repository (and a
# heading, for a #fragment).
step "docs links" python3 tools/check_doc_links.py
step "architecture: dependency graph" python3 tools/check_architecture.py
# Every C++ file as .clang-format has it (clang-format -i FILE formats one).
step "clang-format" bash -c '
  git ls-files "*.cc" "*.h" | grep -v "^third_party/" | xargs clang-format --dry-run --Werror &&
    echo "clang-format: every C++ file formatted"'

echo "${passed} passed, ${failed} failed"
exit $overall

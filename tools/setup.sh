#!/usr/bin/env bash
# Installs the Debian packages alloctrace builds and runs with. Idempotent:
# installs only what is missing, and prints one line when it has nothing to do.
set -euo pipefail

packages=(
  bazel-bootstrap        # Bazel 4.2.3
  bazel-rules-java       # @rules_java for offline toolchain resolution
  build-essential
  binutils               # addr2line names call sites (inspect --sites); strip, objcopy in tests
  pkg-config
  protobuf-compiler libprotobuf-dev
  libabsl-dev
  libboost-dev           # Boost.Pool (header-only)
  libgtest-dev libgmock-dev
  libbenchmark-dev
  libgoogle-perftools-dev libjemalloc-dev libmimalloc-dev  # replay baselines
  python3                # tests capture real programs (sort, python3)
  clang libclang-rt-14-dev  # libFuzzer: tools/fuzz.sh
  clang-format           # .clang-format; tools/test.sh checks every C++ file
  cmake                  # the CMake package and examples/cmake
  ccache                 # tools/test.sh compiles the CMake package through it
)
# --with-browser (the README's test command and .ci/run pass it): Chromium opens the HTML
# reports (//charts:browser_test, tools/report_screenshots.sh), python3-pil reads the
# screenshots, and the pages and charts are set in DejaVu Sans.
if [ "${1:-}" = "--with-browser" ]; then
  packages+=(chromium python3-pil fonts-dejavu-core)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' \
    || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup: done"

#!/usr/bin/env bash
# The replayer binary ($1) needs no shared Abseil or protobuf library: its
# children start without loading them (third_party/system_libs.bzl:
# static_abseil_protobuf).
set -euo pipefail
needed=$(readelf -d "$1" | grep NEEDED || true)
if [ -z "$needed" ]; then
  echo "FAIL: readelf -d $1 lists no NEEDED entries (not a dynamic binary?)"
  exit 1
fi
if grep -E "libabsl_|libprotobuf" <<<"$needed"; then
  echo "FAIL: $1 needs the shared libraries above"
  exit 1
fi
echo "PASS: $1 needs $(wc -l <<<"$needed") shared libraries, none of Abseil or protobuf"

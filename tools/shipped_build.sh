#!/bin/sh
# The build a user would ship, for replayer --shipped_build: builds a Bazel
# cc_binary with the alias lines the replayer puts in $ALLOCTRACE_ALIASES
# pasted into SOURCE (which reads them from the macro ALLOCTRACE_ALIASES,
# as examples/programs/*.cc do) and copies it to $ALLOCTRACE_SHIPPED.
# Without ALLOCTRACE_ALIASES it builds the target as it is (the replayer's
# last call, which leaves bazel-bin as it was).
#
#   bazel-bin/replayer/replayer --shipped_build='tools/shipped_build.sh
#       //examples/programs:service examples/programs/service.cc'
#       service.trace -- bazel-bin/examples/programs/service
#
# Only SOURCE is compiled again for each set of lines (--per_file_copt), so
# a build costs that file's compile and the link. Bazel reads options as
# comma-separated lists here, so the commas of the lines are escaped.
set -eu

if [ $# -ne 2 ]; then
  echo "usage: tools/shipped_build.sh //package:target path/to/source.cc" >&2
  exit 2
fi
target=$1
source=$2
case "$target" in
  //*:*) ;;
  *) echo "tools/shipped_build.sh: '$target' is not a label //package:target" >&2; exit 2 ;;
esac
if [ ! -f "$source" ]; then
  echo "tools/shipped_build.sh: no source file '$source' here ($(pwd))" >&2
  exit 2
fi

if [ -n "${ALLOCTRACE_ALIASES+set}" ]; then
  escaped=$(printf '%s' "$ALLOCTRACE_ALIASES" | sed 's/,/\\,/g')
  bazel build "$target" "--per_file_copt=$source@-DALLOCTRACE_ALIASES=$escaped"
else
  bazel build "$target"
fi
# //a/b:c is bazel-bin/a/b/c.
built="bazel-bin/$(printf '%s' "${target#//}" | tr ':' '/')"
if [ -n "${ALLOCTRACE_SHIPPED:-}" ]; then
  cp -f "$built" "$ALLOCTRACE_SHIPPED"
fi

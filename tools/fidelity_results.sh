#!/usr/bin/env bash
# Regenerates docs/fidelity_results.md: //fidelity:check over every built-in
# workload (the multi-threaded ones replayed per thread and on one thread),
# then over three real programs captured whole (sort of 300k lines; a
# python3 dict churn with PYTHONMALLOC=malloc, so every object goes to
# malloc; examples/mt_program, producers and consumers on four threads),
# each under every replay model (--touch first and program, each read from
# the replay's cold pass and from its warm passes). Run it on a
# quiet machine: other work on the cores widens the in-situ intervals until
# no difference is outside noise. Takes 20 to 30 minutes on 2 cores.
#
#   tools/fidelity_results.sh               # 11 interleaved runs each
#   RUNS=5 tools/fidelity_results.sh        # quicker, wider intervals
#   CHECK_BIN=path/to/check tools/fidelity_results.sh   # without building
#   FIDELITY_JSON_DIR=dir tools/fidelity_results.sh     # keep the JSON reports
#
# Exit status: the check's (1 if a run failed; nothing is written then).
set -euo pipefail
cd "$(dirname "$0")/.."

check=bazel-bin/fidelity/check
if [ -n "${CHECK_BIN:-}" ]; then
  check=$CHECK_BIN
else
  bazel build -c opt --color=no --curses=no //fidelity:check //examples/mt_program \
    >/dev/null 2>&1 || {
    echo "fidelity_results: bazel build //fidelity:check failed" >&2
    exit 1
  }
fi
mt_program=${MT_PROGRAM:-$PWD/bazel-bin/examples/mt_program/mt_program}
runs=${RUNS:-11}
flags=(--runs="$runs" --touch=first,program --phase=cold,warm --format=json)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The programs' inputs, the same on every machine.
python3 - "$tmp" <<'EOF'
import random, sys
rng = random.Random(1)
with open(sys.argv[1] + "/lines.txt", "w") as f:
    for _ in range(300000):
        f.write("%016x %d\n" % (rng.getrandbits(64), rng.randrange(10**6)))
with open(sys.argv[1] + "/churn.py", "w") as f:
    f.write("d = {}\n"
            "for i in range(200000):\n"
            "    d[str(i)] = [i, str(i)]\n"
            "    if i % 3 == 0:\n"
            "        d.pop(str(i // 2), None)\n")
EOF

"$check" "${flags[@]}" --workloads=all --out="$tmp/workloads.json"
"$check" "${flags[@]}" --out="$tmp/sort.json" --program -- /usr/bin/sort "$tmp/lines.txt"
PYTHONMALLOC=malloc "$check" "${flags[@]}" --out="$tmp/python.json" \
  --program -- /usr/bin/python3 "$tmp/churn.py"
"$check" "${flags[@]}" --out="$tmp/mt_program.json" --program -- "$mt_program" 2 2 50000

out=docs/fidelity_results.md
{
  echo "# Fidelity check results"
  echo
  echo "Written by \`tools/fidelity_results.sh\` (RUNS=$runs): \`//fidelity:check\` over"
  echo "every built-in workload, then over \`sort\` of 300k lines, a python3 dict"
  echo "churn (\`PYTHONMALLOC=malloc\`) and \`examples/mt_program 2 2 50000\`, each"
  echo "captured whole. How to read it: [fidelity.md](fidelity.md), \"How far the"
  echo "replay can be trusted\". The JSON behind each table is"
  echo "reproduced by the same command; \`check --render=FILE\` prints one as a table."
  for part in workloads sort python mt_program; do
    echo
    echo '```'
    "$check" --render="$tmp/$part.json"
    echo '```'
  done
} >"$out.tmp"
mv "$out.tmp" "$out"
if [ -n "${FIDELITY_JSON_DIR:-}" ]; then  # keep the JSON reports too
  mkdir -p "$FIDELITY_JSON_DIR" && cp "$tmp"/*.json "$FIDELITY_JSON_DIR/"
fi
echo "fidelity_results: wrote $out" >&2

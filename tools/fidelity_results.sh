#!/usr/bin/env bash
# The fidelity study: regenerates docs/fidelity_results.md. //fidelity:check
# over the default built-in workloads and the multi-threaded ones (replayed
# per thread and on one thread), then over real programs captured whole,
# unmodified: Debian's python3 (a dict churn, PYTHONMALLOC=malloc so every
# object goes to malloc), perl (a hash churn), sqlite3 (an in-memory table
# with an index), GCC's C++ compiler proper (cc1plus on a preprocessed
# unit), xz and sort, and the project's two multi-threaded example programs
# (mt_program; producer_consumer, whose every message is freed by the other
# thread). Each is read under every replay model (--touch first and auto,
# the replayer's default, each from the replay's cold pass and its warm
# passes), and the
# study's table gives, per program, the replay's pick against the program's
# best. Run it on a quiet machine: other work on the cores widens the
# in-situ intervals until no difference is outside noise. Takes about 20
# minutes on 2 cores; a program that is not installed is left out, and said.
# Fifteen rounds, since at seven a program's own halves agree with each
# other too rarely to tell the replay's misses from its noise
# (docs/fidelity.md, "The program against itself").
#
#   tools/fidelity_results.sh               # 15 interleaved runs each
#   RUNS=7 tools/fidelity_results.sh        # wider intervals, about 9 minutes
#   CHECK_BIN=path/to/check tools/fidelity_results.sh   # without building
#   FIDELITY_JSON_DIR=dir tools/fidelity_results.sh     # keep the JSON reports
#   OUT=file tools/fidelity_results.sh                  # write elsewhere
#   EXAMPLES_BIN=dir tools/fidelity_results.sh          # the example programs' directory
#
# Exit status: the check's (1 if a run failed; nothing is written then).
set -euo pipefail
cd "$(dirname "$0")/.."

check=$PWD/bazel-bin/fidelity/check
if [ -n "${CHECK_BIN:-}" ]; then
  check=$(realpath "$CHECK_BIN")
else
  bazel build -c opt --color=no --curses=no //fidelity:check //examples/mt_program:all \
    >/dev/null 2>&1 || {
    echo "fidelity_results: bazel build //fidelity:check failed" >&2
    exit 1
  }
fi
examples=$(realpath "${EXAMPLES_BIN:-bazel-bin/examples/mt_program}")
json_dir=${FIDELITY_JSON_DIR:+$(realpath -m "$FIDELITY_JSON_DIR")}
runs=${RUNS:-15}
out=$(realpath -m "${OUT:-docs/fidelity_results.md}")
flags=(--runs="$runs" --touch=first,auto --phase=cold,warm --format=json)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The programs' inputs, the same on every machine.
python3 - "$tmp" <<'EOF'
import random, sys
d = sys.argv[1]
rng = random.Random(1)
with open(d + "/lines.txt", "w") as f:
    for _ in range(300000):
        f.write("%016x %d\n" % (rng.getrandbits(64), rng.randrange(10**6)))
with open(d + "/churn.py", "w") as f:
    f.write("d = {}\n"
            "for i in range(200000):\n"
            "    d[str(i)] = [i, str(i)]\n"
            "    if i % 3 == 0:\n"
            "        d.pop(str(i // 2), None)\n")
with open(d + "/churn.pl", "w") as f:
    f.write("my %h;\n"
            "for my $i (0 .. 199999) {\n"
            "  $h{\"k$i\"} = [$i, \"v$i\"];\n"
            "  delete $h{\"k\" . int($i / 2)} if $i % 3 == 0;\n"
            "}\n"
            "my @k = sort keys %h;\n"
            "print scalar(@k), \"\\n\";\n")
with open(d + "/table.sql", "w") as f:
    f.write("CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT, c REAL);\n"
            "CREATE INDEX tb ON t(b);\n"
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100000)\n"
            "  INSERT INTO t SELECT i, printf('%x', (i * 2654435761) % 4294967296), i * 0.5 FROM n;\n"
            "SELECT count(*), sum(length(b)) FROM t WHERE b > '8';\n"
            "SELECT substr(b, 1, 2) AS p, count(*) FROM t GROUP BY p ORDER BY 2 DESC LIMIT 3;\n"
            "DELETE FROM t WHERE a % 3 = 0;\n"
            "SELECT count(*) FROM t;\n")
with open(d + "/unit.cc", "w") as f:
    f.write("#include <algorithm>\n#include <map>\n#include <string>\n#include <vector>\n"
            "int main() {\n"
            "  std::map<std::string, std::vector<int>> m;\n"
            "  for (int i = 0; i < 10; ++i) m[std::to_string(i)].push_back(i);\n"
            "  std::vector<int> v{3, 1, 2};\n"
            "  std::sort(v.begin(), v.end());\n"
            "  return static_cast<int>(m.size()) + v[0];\n"
            "}\n")
EOF
head -c 2000000 "$tmp/lines.txt" >"$tmp/lines2M.txt"

parts=()
study() {  # study NAME check-arguments...: one report, kept as $tmp/NAME.json
  local name=$1
  shift
  "$check" "${flags[@]}" --out="$tmp/$name.json" "$@"
  parts+=("$name")
}
missing=()
program() {  # program NAME EXECUTABLE ARGS...: a real program, if installed
  local name=$1 exe=$2
  shift 2
  if [ -x "$exe" ]; then
    study "$name" --program -- "$exe" "$@"
  else
    missing+=("$name ($exe)")
  fi
}

# The programs run in the inputs' directory, so the reports name them as
# "churn.py", not by a temporary path.
cd "$tmp"
study workloads
study mt_workloads --workloads=mt
python=/usr/bin/python3.11
[ -x "$python" ] || python=$(command -v python3)
PYTHONMALLOC=malloc program python3 "$python" churn.py
program perl /usr/bin/perl churn.pl
program sqlite3 /usr/bin/sqlite3 :memory: ".read table.sql"
cc1plus=$(g++ -print-prog-name=cc1plus 2>/dev/null || true)
if [ -x "$cc1plus" ] && g++ -std=c++17 -E unit.cc -o unit.ii 2>/dev/null; then
  program cc1plus "$cc1plus" -fpreprocessed -quiet -O1 unit.ii -o /dev/null
else
  missing+=("cc1plus (g++)")
fi
program xz /usr/bin/xz -1 -c lines2M.txt
program sort /usr/bin/sort lines.txt
program mt_program "$examples/mt_program" 2 2 50000
program producer_consumer "$examples/producer_consumer" 100000

all=$(printf "$tmp/%s.json," "${parts[@]}")
all=${all%,}
{
  echo "# Fidelity study results"
  echo
  echo "Written by \`tools/fidelity_results.sh\` (RUNS=$runs): \`//fidelity:check\` over"
  echo "the default built-in workloads and the multi-threaded ones, then over real"
  echo "programs captured whole (python3, perl, sqlite3, cc1plus, xz, sort) and the"
  echo "example programs mt_program and producer_consumer. How to read it:"
  echo "[fidelity.md](fidelity.md). \`check --render=A.json,B.json --study=MODEL\`"
  echo "prints the study's table from saved reports."
  if [ ${#missing[@]} -gt 0 ]; then
    echo
    echo "Not installed here, left out: ${missing[*]}."
  fi
  for model in auto/cold first/cold; do
    echo
    echo '```'
    "$check" --render="$all" --study="$model"
    echo '```'
  done
  echo
  echo "Every model's summary over the whole study:"
  echo
  echo '```'
  "$check" --render="$all" | sed -n '/^saved: /,$p'
  echo '```'
  for part in "${parts[@]}"; do
    echo
    echo '```'
    "$check" --render="$tmp/$part.json"
    echo '```'
  done
} >"$out.tmp"
mv "$out.tmp" "$out"
if [ -n "$json_dir" ]; then  # keep the JSON reports too
  mkdir -p "$json_dir" && cp "$tmp"/*.json "$json_dir/"
fi
echo "fidelity_results: wrote $out" >&2

"""The fidelity study's short form, a guard against a regression of the
replay's ranking: //fidelity:check on a multi-threaded workload whose
program separates the mallocs from a pool shared by every thread by about
5x (thread_map_churn, whose threads share nothing but that pool: glibc
13 ms in situ and slab/mt/single 68 ms in the study). Larson is left out:
its threads pass blocks to each other, and the pool's lock contention that
makes it slow in the program is the cause docs/fidelity.md lists as open
(the replay under-reads it, by how much depending on the machine's load:
2.3x in situ read as 1.23x at load 4 to 5, a pass at load 2). Wherever the program
itself puts two allocators 2x or more apart (medians of 5 interleaved
runs), the replay must order them the same way and read at least half the
gap on a log scale (a 5x gap as 2.2x or more). Gaps that wide are no
timing a shared machine can turn over; a replay that reads them backwards
or flattens them (a wait, a clock or a cost counted wrong) has stopped
ranking as the program does: with a wait for every object id that passed
between threads, the replay read thread_map_churn's 5.5x as 1.4x. The full
study is tools/fidelity_results.sh.

A failed check is run once more and only a second failure fails the test:
near the threshold one run in several lands under it (the program 2.4x,
the replay 1.23x against a floor of 1.55x, once in seven runs on a quiet
machine), while a replay that has stopped ranking as the program does
misses by far in every run."""

import json
import os
import subprocess
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHECK = os.path.join(ROOT, "fidelity", "check")
GROSS = 2.0  # the program's ratio from which the replay must agree


def gross_pairs(entry, model):
    """(faster, slower, in-situ ratio, replay ratio) for every pair the
    program puts GROSS apart."""
    insitu = entry["insitu"]
    rows = {r["allocator"]: r for r in entry["replay"][model]["rows"]}
    pairs = []
    for a in insitu:
        for b in insitu:
            fa, fb = insitu[a], insitu[b]
            if fb["median_ms"] < GROSS * fa["median_ms"]:
                continue
            pairs.append((a, b, fb["median_ms"] / fa["median_ms"],
                          rows[b]["replay_ns_per_op"] / rows[a]["replay_ns_per_op"]))
    return pairs


def run_check(d, attempt):
    """Runs the short study once; returns its JSON document."""
    out = os.path.join(d, f"guard{attempt}.json")
    p = subprocess.run(
        [CHECK, "--runs=5", "--workloads=thread_map_churn",
         "--allocators=glibc,tcmalloc,slab/mt/single", "--touch=auto", "--phase=cold",
         "--threads=auto", "--format=json", f"--out={out}"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, check=False)
    if p.returncode != 0:
        raise AssertionError(f"fidelity/check exited {p.returncode}: {p.stderr}")
    with open(out) as f:
        return json.load(f)


def misreadings(doc):
    """(pairs compared, what each pair the replay misread looked like)."""
    compared, missed = 0, []
    for e in doc["entries"]:
        for fast, slow, insitu_ratio, replay_ratio in gross_pairs(e, "auto/cold"):
            compared += 1
            if replay_ratio < insitu_ratio ** 0.5:
                missed.append(
                    f"{e['name']}: in the program {slow} takes {insitu_ratio:.1f}x {fast}'s "
                    f"time; the replay reads it {replay_ratio:.2f}x "
                    f"(at least {insitu_ratio ** 0.5:.2f}x needed)")
    return compared, missed


class StudyGuardTest(unittest.TestCase):
    def test_the_replay_orders_what_the_program_puts_far_apart(self):
        with tempfile.TemporaryDirectory() as d:
            compared, missed = misreadings(run_check(d, 1))
            if missed:
                first = missed
                compared, missed = misreadings(run_check(d, 2))
                self.assertFalse(
                    missed, "in two runs in a row:\n" + "\n".join(first + missed))
        # The pool is 3x to 5x the mallocs there when the program's four
        # threads run at once. When they take turns (a loaded machine, and
        # now and then even a quiet one: a clean clone's run on 2026-12-02
        # found nothing 2x apart at a load under the cores) the pool's lock
        # is seldom contended and the program itself puts nothing 2x apart:
        # nothing to guard in that run, which is said as a skip.
        if compared == 0:
            load, cores = os.getloadavg()[0], os.cpu_count() or 1
            self.skipTest(f"the program put nothing 2x apart this run "
                          f"(load {load:.1f} on {cores} cores)")


if __name__ == "__main__":
    unittest.main()

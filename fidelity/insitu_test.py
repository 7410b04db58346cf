"""Every built-in workload runs in situ, through TraceAllocator's policy switch.

insitu takes its policy from ALLOCTRACE_POLICY, as a user's instrumented
program does, and names no allocator of its own: its --list is the switch's
names (std and the pool catalog), and its thread-safe ones are the catalog's.
A pool held per allocator object (a `stack` policy) must survive a workload
that takes memory from a fresh allocator each time (the global heap, arena
0): records_local_pool once crashed so. This runs each workload once, at its
own default size (but records_by_value and records_local_pool, whose 1,000
rounds repeat the first at 2 to 3 s a run, at 100 rounds), under std,
alloctrace's own pools in both threadings and holdings, and an article pool
of each storage kind, and checks the JSON line; it times nothing."""

import json
import os
import subprocess
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INSITU = os.path.join(ROOT, "fidelity", "insitu")
REPLAYER = os.path.join(ROOT, "replayer", "replayer")

# A cross-section of the catalog; test_every_name_is_a_replayer_policy covers
# the rest by name.
SINGLE_THREADED = ["std", "slab/st/stack", "slab/st/single", "slab/mt/stack", "slab/mt/single",
                   "small_node/st/stack", "small_node/st/single", "small_node/mt/stack",
                   "small_node/mt/single", "pool/simple/exp/st/stack/free",
                   "pool/boundary/exp/st/stack/free", "pool/ordered/exp/st/stack/free",
                   "pool/ordered/lin/st/single/keep"]
# Workloads whose default 1,000 rounds take seconds a run (each round repeats
# the first).
SLOW_ROUNDS = ["records_by_value", "records_local_pool"]
MULTI_THREADED = ["std", "slab/mt/stack", "slab/mt/single", "small_node/mt/stack",
                  "pool/boundary/exp/mt/single/free"]


def listing():
    return subprocess.run([INSITU, "--list"], stdout=subprocess.PIPE, text=True,
                          check=True).stdout.splitlines()


def names(lines, kind):
    return [l.split()[1] for l in lines if l.startswith(kind + " ")]


def insitu(workload, policy, *args):
    env = dict(os.environ, ALLOCTRACE_POLICY=policy)
    return subprocess.run([INSITU, f"--workload={workload}", *args], env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, check=False,
                          timeout=120)


class InsituTest(unittest.TestCase):
    def check_run(self, p, workload, policy):
        self.assertEqual(p.returncode, 0, f"{workload} with {policy}: {p.stderr[-300:]}")
        line = json.loads(p.stdout.strip().splitlines()[-1])
        self.assertEqual(line["workload"], workload)
        self.assertEqual(line["policy"], policy)  # the switch took it
        self.assertEqual(line["replay_policy"], "malloc" if policy == "std" else policy)
        self.assertGreater(line["cpu_seconds"], 0, f"{workload} with {policy}")
        return line

    def test_every_workload_under_the_switch(self):
        lines = listing()
        workloads = names(lines, "workload")
        allocators = names(lines, "allocator")
        self.assertGreaterEqual(len(workloads), 20)
        for a in SINGLE_THREADED:
            self.assertIn(a, allocators)
        for w in workloads:
            args = ["--param=rounds=100"] if w in SLOW_ROUNDS else []
            for a in SINGLE_THREADED:
                line = self.check_run(insitu(w, a, *args), w, a)
                self.assertFalse(line["multi_threaded"])

    def test_unset_policy_is_std_and_records_nothing(self):
        env = {k: v for k, v in os.environ.items()
               if k not in ("ALLOCTRACE_POLICY", "ALLOCTRACE_OUT")}
        with tempfile.TemporaryDirectory() as cwd:
            p = subprocess.run([INSITU, "--workload=simple_map", "--param=entries=1000"],
                               env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, check=False)
            self.check_run(p, "simple_map", "std")
            self.assertEqual(os.listdir(cwd), [])  # no alloctrace.<pid>.trace

    def test_multi_threaded_workloads_under_thread_safe_policies_only(self):
        """They share allocators between threads: a thread-safe policy runs
        them, any other is refused (exit 2), never run into a crash."""
        lines = listing()
        workloads = names(lines, "mt_workload")
        safe = names(lines, "mt_allocator")
        self.assertEqual(workloads, ["producer_consumer", "larson", "migration",
                                     "thread_map_churn"])
        self.assertEqual(safe[0], "std")
        for a in MULTI_THREADED:
            self.assertIn(a, safe)
        self.assertNotIn("slab/st/single", safe)
        for w in workloads:
            for a in MULTI_THREADED:
                line = self.check_run(insitu(w, a), w, a)
                self.assertTrue(line["multi_threaded"])
            p = insitu(w, "slab/st/stack")
            self.assertEqual(p.returncode, 2, w)
            self.assertIn("is not thread-safe", p.stderr)

    def test_every_name_is_a_replayer_policy(self):
        """The in-situ policies are the replayer's catalog, by name, and
        thread-safe exactly where the replayer says so."""
        lines = listing()
        replayer = {}
        for l in subprocess.run([REPLAYER, "--list-policies"], stdout=subprocess.PIPE,
                                text=True, check=True).stdout.splitlines():
            if l and not l.startswith(" ") and " " in l:
                replayer[l.split()[0]] = l
        allocators = names(lines, "allocator")
        self.assertEqual(allocators[0], "std")
        for a in allocators[1:]:
            self.assertIn(a, replayer)
        self.assertEqual(set(names(lines, "mt_allocator")) - {"std"},
                         {a for a in allocators[1:] if "not thread-safe" not in replayer[a]})
        # Every pool policy the replayer knows from the catalog runs in situ.
        catalog = {n for n, l in replayer.items() if l.split()[1] in ("ours", "article")}
        self.assertEqual(catalog, set(allocators[1:]))

    def test_unknown_names_are_refused(self):
        for workload, policy, what in [("nope", "std", "no such workload"),
                                       ("simple_map", "nope", "no such policy")]:
            p = insitu(workload, policy)
            self.assertEqual(p.returncode, 2, (workload, policy))
            self.assertIn(what, p.stderr)


if __name__ == "__main__":
    unittest.main()

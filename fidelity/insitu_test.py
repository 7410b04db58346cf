"""Every built-in workload runs in situ with every allocator insitu offers.

A container allocator that holds its pool in the allocator object
(HoldingStack) must not be used where a workload takes memory from a fresh
allocator each time (the global heap): records_local_pool did so and
crashed. This runs each pair once, at the workloads' own default sizes, and
checks the JSON line; it times nothing."""

import json
import os
import subprocess
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INSITU = os.path.join(ROOT, "fidelity", "insitu")
REPLAYER = os.path.join(ROOT, "replayer", "replayer")


class InsituTest(unittest.TestCase):
    def test_every_workload_with_every_allocator(self):
        listing = subprocess.run([INSITU, "--list"], stdout=subprocess.PIPE, text=True,
                                 check=True).stdout.splitlines()
        workloads = [l.split()[1] for l in listing if l.startswith("workload ")]
        allocators = [l.split()[1] for l in listing if l.startswith("allocator ")]
        self.assertGreaterEqual(len(workloads), 20)
        self.assertIn("slab/st/stack", allocators)
        for w in workloads:
            for a in allocators:
                p = subprocess.run([INSITU, f"--workload={w}", f"--allocator={a}"],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                   check=False, timeout=120)
                self.assertEqual(p.returncode, 0, f"{w} with {a}: {p.stderr[-300:]}")
                line = json.loads(p.stdout.strip().splitlines()[-1])
                self.assertEqual(line["workload"], w)
                self.assertGreater(line["cpu_seconds"], 0, f"{w} with {a}")

    def test_multi_threaded_workloads_with_thread_safe_allocators_only(self):
        """They share allocators between threads: a thread-safe allocator
        runs them, any other is refused (exit 2), never run into a crash."""
        listing = subprocess.run([INSITU, "--list"], stdout=subprocess.PIPE, text=True,
                                 check=True).stdout.splitlines()
        workloads = [l.split()[1] for l in listing if l.startswith("mt_workload ")]
        safe = [l.split()[1] for l in listing if l.startswith("mt_allocator ")]
        self.assertEqual(workloads, ["producer_consumer", "larson", "migration",
                                     "thread_map_churn"])
        self.assertEqual(safe, ["std", "slab/mt/stack", "boost_fast_pool"])
        # Small runs: boost_fast_pool serves arrays by a linear search.
        small = {"producer_consumer": "messages=2000", "larson": "operations=300",
                 "migration": "operations=1000", "thread_map_churn": "operations=2000"}
        for w in workloads:
            for a in safe:
                p = subprocess.run([INSITU, f"--workload={w}", f"--allocator={a}",
                                    f"--param={small[w]}"],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                   check=False, timeout=120)
                self.assertEqual(p.returncode, 0, f"{w} with {a}: {p.stderr[-300:]}")
                line = json.loads(p.stdout.strip().splitlines()[-1])
                self.assertEqual(line["workload"], w)
                self.assertGreater(line["cpu_seconds"], 0, f"{w} with {a}")
            p = subprocess.run([INSITU, f"--workload={w}", "--allocator=slab/st/stack"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               check=False, timeout=120)
            self.assertEqual(p.returncode, 2, w)
            self.assertIn("is not thread-safe", p.stderr)

    def test_every_replay_name_is_a_replayer_policy(self):
        """The in-situ allocators are the replayer's catalog, by name."""
        listing = subprocess.run([INSITU, "--list"], stdout=subprocess.PIPE, text=True,
                                 check=True).stdout.splitlines()
        policies = {l.split()[0] for l in subprocess.run(
            [REPLAYER, "--list-policies"], stdout=subprocess.PIPE, text=True,
            check=True).stdout.splitlines() if l and not l.startswith(" ") and " " in l}
        for line in listing:
            if not line.startswith("allocator "):
                continue
            # allocator NAME (replay: STACK, global heap: SINGLE)
            words = line.replace("(", " ").replace(")", " ").replace(",", " ").split()
            stack, single = words[words.index("replay:") + 1], words[-1]
            self.assertIn(stack, policies, line)
            self.assertIn(single, policies, line)

    def test_unknown_names_are_refused(self):
        for args, what in [(["--workload=nope"], "no such workload"),
                           (["--workload=simple_map", "--allocator=nope"], "no such allocator")]:
            p = subprocess.run([INSITU, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, check=False)
            self.assertEqual(p.returncode, 2, args)
            self.assertIn(what, p.stderr)


if __name__ == "__main__":
    unittest.main()

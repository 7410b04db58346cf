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


class InsituTest(unittest.TestCase):
    def test_every_workload_with_every_allocator(self):
        listing = subprocess.run([INSITU, "--list"], stdout=subprocess.PIPE, text=True,
                                 check=True).stdout.splitlines()
        workloads = [l.split()[1] for l in listing if l.startswith("workload ")]
        allocators = [l.split()[1] for l in listing if l.startswith("allocator ")]
        self.assertGreaterEqual(len(workloads), 20)
        self.assertIn("slab", allocators)
        for w in workloads:
            for a in allocators:
                p = subprocess.run([INSITU, f"--workload={w}", f"--allocator={a}"],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                   check=False, timeout=120)
                self.assertEqual(p.returncode, 0, f"{w} with {a}: {p.stderr[-300:]}")
                line = json.loads(p.stdout.strip().splitlines()[-1])
                self.assertEqual(line["workload"], w)
                self.assertGreater(line["cpu_seconds"], 0, f"{w} with {a}")

    def test_unknown_names_are_refused(self):
        for args, what in [(["--workload=nope"], "no such workload"),
                           (["--workload=simple_map", "--allocator=nope"], "no such allocator")]:
            p = subprocess.run([INSITU, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, check=False)
            self.assertEqual(p.returncode, 2, args)
            self.assertIn(what, p.stderr)


if __name__ == "__main__":
    unittest.main()

"""The fidelity check's halves of what it shares with the replayer, tested
against the replayer's C++: the bootstrap (analysis.bootstrap_ci against
replayer/measure/stats.h's MedianWithCi, through //replayer/measure:
bootstrap_cases) and the preloaded mallocs (check.PRELOADS, read from
replayer/engine/allocators/preloaded_mallocs.inc, against what the replayer
lists)."""

import json
import os
import random
import re
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import analysis  # noqa: E402
import check  # noqa: E402  (a data file of //fidelity:check, beside this one)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BOOTSTRAP_CASES = os.path.join(ROOT, "replayer", "measure", "bootstrap_cases")
REPLAYER = os.path.join(ROOT, "replayer", "replayer")


def cpp_estimates(cases, resamples=None):
    """[(median, lo, hi)] of MedianWithCi for each case, and the seed and
    resamples it used."""
    args = [BOOTSTRAP_CASES] + ([f"--resamples={resamples}"] if resamples else [])
    args += [",".join(repr(float(x)) for x in xs) for xs in cases]
    out = json.loads(subprocess.run(args, check=True, stdout=subprocess.PIPE, text=True).stdout)
    return [tuple(e) for e in out["estimates"]], out["seed"], out["resamples"]


def cases():
    """Samples as the check meets them (run times, ratios near 1) and edge
    cases: one value, two, ties, an outlier, negative values, every count
    from 1 to 12 and a few larger, in no particular order."""
    rng = random.Random(1)
    out = [[4.0], [1.0, 2.0], [3.0, 1.0, 2.0, 2.0], [10.0, 11.0, 9.5, 10.2, 30.0],
           [5.0] * 7, [-1.5, 0.0, 2.25, -3.0, 1.0, 1.0], [0.84, 0.924, 0.756, 0.882]]
    for n in list(range(1, 13)) + [16, 31, 50, 101]:
        out.append([rng.lognormvariate(0, 0.3) for _ in range(n)])
        out.append([1 + rng.gauss(0, 0.05) for _ in range(n)])
        out.append([float(rng.randrange(4)) for _ in range(n)])  # many ties
    return out


class BootstrapParityTest(unittest.TestCase):
    def test_the_generator_is_the_standards_mt19937_64(self):
        rng = analysis.Mt19937_64()
        for _ in range(9999):
            rng()
        self.assertEqual(rng(), 9981545732273789042)

    def test_seed_and_resamples_are_the_replayers(self):
        _, seed, resamples = cpp_estimates([])
        self.assertEqual(seed, analysis.BOOTSTRAP_SEED)
        self.assertEqual(resamples, analysis.BOOTSTRAP_RESAMPLES)

    def test_same_cases_give_the_same_intervals_to_the_bit(self):
        xs_list = cases()
        for resamples in (None, 2, 7, 101):
            got, _, r = cpp_estimates(xs_list, resamples)
            self.assertEqual(len(got), len(xs_list))
            for xs, (median, lo, hi) in zip(xs_list, got):
                with self.subTest(resamples=r, xs=xs):
                    self.assertEqual(analysis.median(xs), median)
                    self.assertEqual(analysis.bootstrap_ci(xs, resamples=r), (lo, hi))

    def test_paired_ratio_is_the_replayers(self):
        # paired_ratio bootstraps the per-round ratios, as PairedRatio does.
        ref = {r: 1.0 + 0.01 * r for r in range(9)}
        sub = {r: 1.02 + 0.013 * ((r * 5) % 9) for r in range(9)}
        ratios = [ref[r] / sub[r] for r in sorted(sub)]
        (want,), _, _ = cpp_estimates([ratios])
        self.assertEqual(analysis.paired_ratio(ref, sub), want)


class PreloadedMallocsTest(unittest.TestCase):
    def test_the_replayer_preloads_what_the_check_preloads(self):
        listing = subprocess.run([REPLAYER, "--list-policies"], check=True,
                                 stdout=subprocess.PIPE, text=True).stdout
        listed = dict(re.findall(r"^(\S+) +external .*\n +adopt: .*LD_PRELOAD=(\S+)$", listing,
                                 re.M))
        self.assertEqual(listed, check.PRELOADS)
        self.assertEqual(list(listed), list(check.PRELOADS))  # and in the same order

    def test_directories_by_machine(self):
        with open(check.PRELOADED_MALLOCS) as f:
            text = f.read()
        _, dirs = check.read_preloaded_mallocs(text, machine="x86_64")
        self.assertEqual(dirs, ["/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu",
                                "/usr/local/lib", "/usr/lib"])
        _, dirs = check.read_preloaded_mallocs(text, machine="aarch64")
        self.assertEqual(dirs[:2], ["/usr/lib/aarch64-linux-gnu", "/lib/aarch64-linux-gnu"])
        _, dirs = check.read_preloaded_mallocs(text, machine="riscv64")
        self.assertEqual(dirs, ["/usr/local/lib", "/usr/lib"])

    def test_a_line_that_is_no_entry_is_an_error(self):
        for line in ['ALLOCTRACE_PRELOADED_MALLOC("a", "liba.so.1")',
                     'ALLOCTRACE_LIBRARY_DIR(kDir)', 'ALLOCTRACE_LIBRARY_DIR("/a" "/b")',
                     'ALLOCTRACE_OTHER("x")']:
            with self.subTest(line=line), self.assertRaises(ValueError):
                check.read_preloaded_mallocs(
                    'ALLOCTRACE_PRELOADED_MALLOC("a", "liba.so.1", "a", "liba-dev")\n'
                    'ALLOCTRACE_LIBRARY_DIR("/usr/lib")\n' + line)


if __name__ == "__main__":
    unittest.main()

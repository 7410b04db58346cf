"""Tests of the fidelity check's statistics and of its reading of the replayer's JSON."""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import analysis  # noqa: E402


def overlaps_of(items, a, b):
    return analysis.overlaps(items[a][1:], items[b][1:])


class StatisticsTest(unittest.TestCase):
    def test_median(self):
        self.assertEqual(analysis.median([3, 1, 2]), 2)
        self.assertEqual(analysis.median([4, 1, 2, 3]), 2.5)
        with self.assertRaises(ValueError):
            analysis.median([])

    def test_bootstrap_interval_holds_the_median_and_is_deterministic(self):
        xs = [10.0, 11.0, 9.5, 10.2, 30.0]
        lo, hi = analysis.bootstrap_ci(xs)
        self.assertLessEqual(lo, analysis.median(xs))
        self.assertGreaterEqual(hi, analysis.median(xs))
        self.assertGreaterEqual(lo, min(xs))
        self.assertLessEqual(hi, max(xs))
        self.assertEqual((lo, hi), analysis.bootstrap_ci(xs))
        self.assertEqual(analysis.bootstrap_ci([4.0]), (4.0, 4.0))

    def test_overlapping_intervals_tie(self):
        ranks = analysis.tie_ranks({
            "a": (1.0, 0.9, 1.1),
            "b": (1.05, 1.0, 1.2),  # overlaps a: tie
            "c": (3.0, 2.9, 3.1),
        })
        self.assertEqual(ranks, {"a": 1.5, "b": 1.5, "c": 3})

    def test_paired_tie_is_the_replayers_rule(self):
        # The cases of replayer/measure/stats_test.cc PairedTieIncludesOneOrLiesWithinTheNoiseFloor.
        self.assertTrue(analysis.paired_tie((1.02, 0.99, 1.05), 0))
        self.assertFalse(analysis.paired_tie((1.05, 1.02, 1.08), 0))
        self.assertTrue(analysis.paired_tie((1.05, 1.02, 1.08), 0.10))
        self.assertFalse(analysis.paired_tie((1.05, 1.02, 1.12), 0.10))
        self.assertTrue(analysis.paired_tie((0.95, 0.93, 0.97), 0.10))
        self.assertFalse(analysis.paired_tie(None, 1))
        # One or two rounds tell nothing apart (the replayer's kMinPairedRounds).
        self.assertTrue(analysis.paired_tie(analysis.paired_ratio([3.0], [2.0]), 0))
        self.assertTrue(analysis.paired_tie(analysis.paired_ratio([3.0, 3.1], [2.0, 2.0]), 0))
        self.assertFalse(analysis.paired_tie(analysis.paired_ratio([3.0, 3.1, 3.0], [2.0] * 3), 0))
        self.assertFalse(analysis.paired_tie((1.28, 1.27, 1.33), 0.03))
        # The floor's median either way from 1, not its interval's end.
        self.assertAlmostEqual(analysis.noise_margin((0.991, 0.968, 1.002)), 1 / 0.991 - 1)
        self.assertAlmostEqual(analysis.noise_margin((1.017, 0.777, 1.335, 7)), 0.017)
        self.assertEqual(analysis.noise_margin(None), 0.0)
        # Not usable: too few rounds, or a malloc reading 0.18x against itself.
        self.assertEqual(analysis.noise_margin((1.1, 1.0, 1.2, 2)), 0.0)
        self.assertEqual(analysis.noise_margin((0.18, 0.15, 0.21, 12)), 0.0)

    def test_paired_ratio_pairs_by_round(self):
        drift = [10, 12, 8, 11, 9, 12, 8, 10]
        r = analysis.paired_ratio(drift, [x / 2 for x in drift])
        self.assertEqual(r, (2.0, 2.0, 2.0))
        # Dicts pair by their round keys; rounds in one side only are left out.
        r = analysis.paired_ratio({0: 4.0, 1: 6.0, 3: 8.0, 5: 9.0},
                                  {0: 2.0, 1: 3.0, 2: 1.0, 3: 4.0})
        self.assertEqual(r, (2.0, 2.0, 2.0))
        self.assertIsNone(analysis.paired_ratio({0: 1.0}, {1: 1.0}))

    def test_paired_runs_break_a_tie_of_overlapping_intervals(self):
        # The machine drifts +-20% between rounds; c is 5% slower in every
        # round. Unpaired intervals overlap; the paired ratio excludes 1.
        drift = [10, 12, 8, 11, 9, 12, 8, 10, 11, 9, 12, 8]
        runs = {"a": drift, "c": [x * 1.05 for x in drift]}
        items = {}
        for n, xs in runs.items():
            lo, hi = analysis.bootstrap_ci(xs)
            items[n] = (analysis.median(xs), lo, hi)
        self.assertEqual(analysis.tie_ranks(items), {"a": 1.5, "c": 1.5})
        self.assertEqual(analysis.tie_ranks(items, runs), {"a": 1, "c": 2})
        # Within a noise floor of 6%, a tie again.
        self.assertEqual(analysis.tie_ranks(items, runs, 0.06), {"a": 1.5, "c": 1.5})

    def test_new_users_paradox_malloc_is_not_tied_with_a_faster_policy(self):
        # slab at 1.28x malloc's speed in every round (+-2%), rounds drifting 2x.
        drift = [10, 20, 11, 19, 12, 18, 10, 20, 13, 17, 11, 19]
        slab = [x / 1.28 * (1.02, 0.98, 1.0)[i % 3] for i, x in enumerate(drift)]
        runs = {"malloc": drift, "slab": slab}
        items = {n: (analysis.median(xs),) + analysis.bootstrap_ci(xs) for n, xs in runs.items()}
        self.assertTrue(overlaps_of(items, "malloc", "slab"))
        ranks = analysis.tie_ranks(items, runs)
        self.assertEqual(ranks, {"slab": 1, "malloc": 2})

    def test_replay_rounds_reads_each_run(self):
        p = {"policy": "slab", "runs": [
            {"round": 0, "passes": [{"kind": "cold", "cpu_s": 2e-6, "wall_s": 4e-6},
                                    {"kind": "warm", "cpu_s": 1e-6, "wall_s": 1e-6},
                                    {"kind": "warm", "cpu_s": 3e-6, "wall_s": 3e-6}]},
            {"round": 3, "passes": [{"kind": "cold", "cpu_s": 4e-6, "wall_s": 4e-6}]}]}
        self.assertEqual(analysis.replay_rounds(p, "cold", 1000), {0: 2.0, 3: 4.0})
        self.assertEqual(analysis.replay_rounds(p, "warm", 1000), {0: 2.0})
        self.assertEqual(analysis.replay_rounds(p, "cold", 1000, "wall"), {0: 4.0, 3: 4.0})
        self.assertEqual(analysis.replay_rounds(p, "cold", None), {})

    def test_tie_needs_every_member_to_overlap(self):
        ranks = analysis.tie_ranks({
            "a": (1.0, 0.9, 1.1),
            "b": (1.1, 1.05, 1.3),   # overlaps a
            "c": (1.25, 1.2, 1.4),   # overlaps b, not a: starts a new group
        })
        self.assertEqual(ranks, {"a": 1.5, "b": 1.5, "c": 3})

    def test_without_intervals_only_equal_values_tie(self):
        ranks = analysis.tie_ranks({"a": (2.0, None, None), "b": (1.0, None, None),
                                    "c": (2.0, None, None)})
        self.assertEqual(ranks, {"b": 1, "a": 2.5, "c": 2.5})

    def test_round_orders_give_each_name_both_parities(self):
        for names in (list("abcdefgh"), list("abcde")):
            orders = analysis.round_orders(names, 8, seed=1)
            self.assertEqual(len(orders), 8)
            for order in orders:
                self.assertEqual(sorted(order), sorted(names))
            self.assertEqual(orders[1], orders[0][::-1])
            # The place of each run in the whole sequence: every name at as
            # many even places as odd ones.
            for name in names:
                parities = [(r * len(names) + orders[r].index(name)) % 2 for r in range(8)]
                self.assertEqual(sum(parities), 4, (names, name, parities))
        self.assertEqual(analysis.round_orders(list("abc"), 4, seed=7),
                         analysis.round_orders(list("abc"), 4, seed=7))
        self.assertNotEqual(analysis.round_orders(list("abcdefgh"), 2, seed=1)[0], list("abcdefgh"))

    def test_spearman(self):
        a = {"x": 1, "y": 2, "z": 3}
        self.assertAlmostEqual(analysis.spearman(a, a), 1.0)
        self.assertAlmostEqual(analysis.spearman(a, {"x": 3, "y": 2, "z": 1}), -1.0)
        self.assertAlmostEqual(analysis.spearman(a, {"x": 1, "y": 3, "z": 2}), 0.5)
        self.assertIsNone(analysis.spearman(a, {"x": 2, "y": 2, "z": 2}))
        self.assertIsNone(analysis.spearman({"x": 1}, {"x": 1}))


class ReplayJsonTest(unittest.TestCase):
    def test_current_form(self):
        p = {"policy": "slab", "ns_per_op": 20.0, "ns_per_op_min": 19.0, "spread_pct": 10.0}
        self.assertEqual(analysis.replay_figures(p), (20.0, 19.0, 21.0))

    def test_form_with_median_and_ci(self):
        p = {"policy": "slab", "ns_per_op": {"median": 20.0, "ci95": [19.5, 20.5]}, "runs": 5}
        self.assertEqual(analysis.replay_figures(p), (20.0, 19.5, 20.5))
        self.assertEqual(analysis.replay_figures({"ns_per_op": {"median": 7}}), (7.0, None, None))

    def test_cold_and_warm_passes(self):
        p = {"policy": "slab", "ns_per_op": {"median": 20.0, "ci95": [19.0, 21.0]},
             "warm_ns_per_op": {"median": 20.0, "ci95": [19.0, 21.0]},
             "cold_ns_per_op": {"median": 35.0, "ci95": [30.0, 40.0]}}
        self.assertEqual(analysis.replay_figures(p, "cold"), (35.0, 30.0, 40.0))
        self.assertEqual(analysis.replay_figures(p, "warm"), (20.0, 19.0, 21.0))
        # An older report has no cold figure: say so rather than use the warm one.
        with self.assertRaisesRegex(analysis.ReplayFormatError, "no cold ns_per_op"):
            analysis.replay_figures({"policy": "slab", "ns_per_op": 3.0}, "cold")
        with self.assertRaises(ValueError):
            analysis.replay_figures(p, "lukewarm")

    def test_missing_figure_names_the_policy(self):
        with self.assertRaisesRegex(analysis.ReplayFormatError, "policy slab"):
            analysis.replay_figures({"policy": "slab"})
        with self.assertRaisesRegex(analysis.ReplayFormatError, "median"):
            analysis.replay_figures({"policy": "slab", "ns_per_op": {"ci95": [1, 2]}})


class CompareTest(unittest.TestCase):
    def test_savings_errors_and_rank_correlation(self):
        insitu = {
            "glibc": [0.100, 0.101, 0.099, 0.100, 0.102],
            "fast": [0.050, 0.051, 0.049, 0.050, 0.052],
            "slow": [0.200, 0.201, 0.199, 0.200, 0.202],
        }
        ops = 1_000_000
        replay = {"glibc": (100.0, 99.0, 101.0), "fast": (60.0, 59.0, 61.0),
                  "slow": (150.0, 149.0, 151.0)}
        rows, rho = analysis.compare(insitu, replay, ops)
        by = {r["allocator"]: r for r in rows}
        self.assertAlmostEqual(by["fast"]["saved_ms"], 50.0)
        self.assertAlmostEqual(by["fast"]["predicted_saved_ms"], 40.0)
        self.assertAlmostEqual(by["fast"]["error"], -0.2)
        self.assertTrue(by["fast"]["within_tolerance"])
        self.assertAlmostEqual(by["slow"]["saved_ms"], -100.0)
        self.assertAlmostEqual(by["slow"]["error"], 0.5)  # predicted -50 vs -100
        self.assertFalse(by["slow"]["within_tolerance"])
        self.assertNotIn("saved_ms", by["glibc"])
        self.assertAlmostEqual(rho, 1.0)
        s = analysis.summarize([(rows, rho)])
        self.assertEqual(s["pairs_outside_noise"], 2)
        self.assertEqual(s["pairs_within_25pct"], 1)
        self.assertEqual(s["rho_at_least_0_9"], 1)
        # Which way: fast's saving predicted 40 of 50 ms, slow's cost 50 of
        # 100: both smaller than the program's (errors -0.2 and +0.5).
        self.assertAlmostEqual(s["median_predicted_over_saved"], 0.65)
        self.assertEqual((s["pairs_under"], s["pairs_over"], s["pairs_opposite"]), (2, 0, 0))

    def test_summary_says_which_way_the_predictions_miss(self):
        jitter = [1.00, 1.01, 0.99, 1.00, 1.02]
        insitu = {n: [t * j for j in jitter] for n, t in
                  {"glibc": 0.100, "over": 0.050, "under": 0.150, "opposite": 0.090}.items()}
        # Predicted against saved: 60 of 50 ms, a cost of 10 of 50, a cost
        # of 5 where 10 were saved.
        replay = {"glibc": (100.0, None, None), "over": (40.0, None, None),
                  "under": (110.0, None, None), "opposite": (105.0, None, None)}
        rows, rho = analysis.compare(insitu, replay, 1_000_000)
        s = analysis.summarize([(rows, rho)])
        self.assertEqual(s["pairs_outside_noise"], 3)
        self.assertEqual((s["pairs_under"], s["pairs_over"], s["pairs_opposite"]), (1, 1, 1))
        self.assertAlmostEqual(s["median_predicted_over_saved"], 0.2)

    def test_saving_is_paired_by_round(self):
        # The machine's speed drifts 40% from round to round; this allocator
        # is 10% faster than glibc in every round. Unpaired the intervals
        # overlap; paired the saving is plainly outside noise.
        speed = [1.0, 1.4, 1.1, 1.3, 1.2, 1.0, 1.35]
        base = [0.100 * f for f in speed]
        xs = [0.090 * f for f in speed]
        saved, (lo, hi), paired = analysis.saving(base, xs)
        self.assertTrue(paired)
        self.assertAlmostEqual(saved, 12.0)  # 10 ms x the median factor 1.2
        self.assertGreater(lo, 0)
        rows, _ = analysis.compare({"glibc": base, "x": xs}, {"glibc": (1.0, None, None),
                                                               "x": (0.9, None, None)}, 1000)
        x = [r for r in rows if r["allocator"] == "x"][0]
        self.assertTrue(x["outside_noise"])
        self.assertEqual(x["saved_ci_ms"], [lo, hi])
        # Unequal run counts: not paired, difference of the medians.
        saved, (lo, hi), paired = analysis.saving(base, xs[:5])
        self.assertFalse(paired)
        self.assertAlmostEqual(saved, (analysis.median(base) - analysis.median(xs[:5])) * 1e3)
        self.assertLessEqual(lo, hi)

    def test_saving_inside_noise_is_not_scored(self):
        insitu = {"glibc": [0.10, 0.12, 0.08], "b": [0.11, 0.09, 0.10]}
        rows, rho = analysis.compare(insitu, {"glibc": (1.0, None, None),
                                              "b": (2.0, None, None)}, 1000)
        b = [r for r in rows if r["allocator"] == "b"][0]
        self.assertFalse(b["outside_noise"])
        self.assertFalse(b["within_tolerance"])
        self.assertIsNone(rho)  # in situ all tied


class PickCostTest(unittest.TestCase):
    def test_the_replays_fastest_against_the_in_situ_fastest(self):
        insitu = {"glibc": [1.00, 1.10, 0.90, 1.05], "slab": [0.80, 0.88, 0.72, 0.84],
                  "jemalloc": [0.84, 0.924, 0.756, 0.882]}
        replay = {"glibc": (50.0, 49, 51), "slab": (40.0, 39, 41), "jemalloc": (35.0, 34, 36),
                  "not_in_situ": (1.0, 1, 1)}
        c = analysis.pick_cost(insitu, replay)
        self.assertEqual((c["pick"], c["best"]), ("jemalloc", "slab"))
        self.assertAlmostEqual(c["ratio"], 1.05)
        # Paired by round: 1.05 in every round, so not tied with the best.
        self.assertEqual([round(x, 9) for x in c["paired"]], [1.05, 1.05, 1.05])
        self.assertFalse(c["tied"])
        self.assertTrue(c["within"])
        # The same pick 20% slower in situ is outside the tolerance.
        insitu["jemalloc"] = [x * 1.2 for x in insitu["slab"]]
        c = analysis.pick_cost(insitu, replay)
        self.assertAlmostEqual(c["ratio"], 1.2)
        self.assertFalse(c["within"])

    def test_the_best_is_paired_by_round(self):
        # b is faster than a in every round, but the rounds drift so far that
        # a's median is the smaller: paired by round, b is the best.
        insitu = {"a": [10, 10, 10, 50, 50], "b": [9, 9, 45, 45, 45]}
        c = analysis.pick_cost(insitu, {"a": (1.0, None, None), "b": (2.0, None, None)})
        self.assertEqual((c["pick"], c["best"]), ("a", "b"))
        self.assertAlmostEqual(c["ratio"], 50 / 45)
        self.assertFalse(c["within"])

    def test_a_pick_that_is_the_best_costs_nothing(self):
        c = analysis.pick_cost({"a": [1.0, 2.0], "b": [3.0, 3.0]},
                               {"a": (1.0, None, None), "b": (2.0, None, None)})
        self.assertEqual((c["pick"], c["best"], c["ratio"]), ("a", "a", 1.0))
        self.assertTrue(c["tied"] and c["within"])
        self.assertIsNone(analysis.pick_cost({"a": [1.0]}, {"b": (1.0, None, None)}))

    def test_a_given_pick_is_measured_as_it_is(self):
        # The replayer's recommendation may be slower in the replay than its
        # fastest (a tie it broke by its fixed order): it is measured anyway.
        insitu = {"a": [1.0, 1.0, 1.0], "b": [1.5, 1.5, 1.5]}
        replay = {"a": (1.0, None, None), "b": (1.02, None, None)}
        c = analysis.pick_cost(insitu, replay, "b")
        self.assertEqual((c["pick"], c["best"]), ("b", "a"))
        self.assertAlmostEqual(c["ratio"], 1.5)
        self.assertFalse(c["within"])
        self.assertIsNone(analysis.pick_cost(insitu, replay, "not_in_situ"))

    def test_summary_counts_picks(self):
        picks = [{"ratio": 1.0, "within": True, "tied": True},
                 {"ratio": 1.3, "within": False, "tied": False}, None]
        s = analysis.summarize([([], None)] * 3, picks)
        self.assertEqual((s["picks"], s["picks_within_5pct"], s["picks_best_or_tied"]), (2, 1, 1))
        self.assertEqual(s["picks_beyond_15pct"], 1)
        self.assertEqual(s["worst_pick_ratio"], 1.3)
        self.assertEqual(analysis.summarize([])["picks"], 0)
        s = analysis.summarize([([], None)] * 3, picks, [None, picks[1], picks[1]])
        self.assertEqual((s["recommended"], s["recommended_within_5pct"],
                          s["recommended_beyond_15pct"]), (2, 0, 2))
        self.assertEqual(s["worst_recommended_ratio"], 1.3)

    def test_half_splits_are_disjoint_halves_and_the_same_each_time(self):
        splits = analysis.half_splits(7)
        self.assertEqual(len(splits), analysis.HALF_SPLITS)
        for a, b in splits:
            self.assertEqual((len(a), len(b)), (3, 4))
            self.assertEqual(sorted(a + b), list(range(7)))
        self.assertEqual(splits, analysis.half_splits(7))
        self.assertGreater(len({tuple(a) for a, _ in splits}), 1)
        # A half of two rounds tells nothing apart (MIN_PAIRED_ROUNDS).
        self.assertEqual(analysis.half_splits(5), [])

    def test_the_program_against_itself_and_the_replay_on_the_same_halves(self):
        # Three allocators far apart, each round within 1% of the others:
        # each half of the rounds ranks them as the other does and predicts
        # the other's savings closely.
        jitter = [1.0, 1.01, 0.99, 1.005, 0.995, 1.0, 1.01, 0.99]
        insitu = {"glibc": [2.0 * j for j in jitter], "a": [1.0 * j for j in jitter],
                  "b": [1.5 * j for j in jitter]}
        ops = 10 ** 6
        right = {"glibc": (2000.0, None, None), "a": (1000.0, None, None),
                 "b": (1500.0, None, None)}
        h = analysis.halves(insitu, right, ops)
        self.assertEqual(h["splits"], analysis.HALF_SPLITS)
        self.assertEqual(h["program"]["rho"], 1.0)
        self.assertEqual(h["program"]["within"], 1.0)
        self.assertTrue(h["program"]["errors"])
        self.assertLess(max(h["program"]["errors"]), 0.05)
        self.assertEqual(h["replay"]["rho"], 1.0)
        self.assertEqual(h["replay"]["within"], 1.0)
        # A replay that orders them backwards is scored on the same halves.
        backwards = {"glibc": (1000.0, None, None), "a": (2000.0, None, None),
                     "b": (1500.0, None, None)}
        h = analysis.halves(insitu, backwards, ops)
        self.assertEqual(h["program"]["rho"], 1.0)
        self.assertEqual(h["replay"]["rho"], -1.0)
        self.assertEqual(h["replay"]["within"], 0.0)
        self.assertEqual(len(h["replay"]["errors"]), len(h["program"]["errors"]))
        self.assertGreater(min(h["replay"]["errors"]), 1.0)
        # Unequal or too few rounds: nothing to halve.
        self.assertIsNone(analysis.halves({"glibc": [1.0] * 8, "a": [1.0] * 7}, right, ops))
        self.assertIsNone(analysis.halves({"glibc": [1.0] * 5, "a": [1.0] * 5}, right, ops))

    def test_summary_of_the_halves(self):
        def half(rho, within, errors):
            return {"rho": rho, "within": within, "errors": errors}
        halved = [{"splits": 8, "program": half(1.0, 1.0, [0.1, 0.2]),
                   "replay": half(0.5, 0.5, [0.4, 0.6])},
                  {"splits": 8, "program": half(None, 0.25, [0.3]),
                   "replay": half(0.0, 0.0, [0.8])}, None]
        s = analysis.summarize([([], None)] * 3, halved=halved)["halves"]
        self.assertEqual((s["workloads"], s["splits"]), (2, 8))
        self.assertEqual((s["program"]["mean_rho"], s["program"]["rho_defined"]), (1.0, 1))
        self.assertEqual((s["program"]["within_5pct"], s["program"]["picked"]), (1.25, 2))
        self.assertEqual(s["program"]["median_abs_error"], 0.2)
        self.assertEqual(s["replay"]["mean_rho"], 0.25)
        self.assertEqual(s["replay"]["median_abs_error"], 0.6)
        self.assertNotIn("halves", analysis.summarize([([], None)]))

    def test_the_replay_where_the_program_agrees_with_itself(self):
        def half(rho, within, errors):
            return {"rho": rho, "within": within, "errors": errors}
        def row(error):
            return {"outside_noise": True, "error": error}
        # Workload 0 agrees with itself on all three; 1 on none (its halves
        # rank at 0.5, pick within 5% in 7 splits of 8, saving error 0.6);
        # 2 on the rank only; 3 has no halves.
        results = [([row(0.1), row(-0.3)], 0.9), ([row(2.0)], -1.0), ([row(5.0)], 0.4),
                   ([row(9.0)], 1.0)]
        picks = [{"ratio": 1.0, "within": True, "tied": True},
                 {"ratio": 1.5, "within": False, "tied": False},
                 {"ratio": 1.2, "within": False, "tied": False},
                 {"ratio": 1.3, "within": False, "tied": False}]
        halved = [{"splits": 8, "program": half(0.9, 1.0, [0.1]), "replay": half(0.9, 1, [])},
                  {"splits": 8, "program": half(0.5, 0.875, [0.6]), "replay": half(0, 0, [])},
                  {"splits": 8, "program": half(0.8, 0.5, [0.7]), "replay": half(0, 0, [])},
                  None]
        a = analysis.summarize(results, picks, [picks[1], None, None, None], halved)["agreeing"]
        self.assertEqual(a["workloads"], 3)
        self.assertEqual(a["rho_workloads"], 2)
        self.assertAlmostEqual(a["mean_rho"], 0.65)
        self.assertEqual((a["picks"], a["picks_within_5pct"], a["picks_beyond_15pct"]), (1, 1, 0))
        self.assertEqual((a["recommended"], a["recommended_within_5pct"]), (1, 0))
        self.assertEqual((a["saving_workloads"], a["pairs_outside_noise"]), (1, 2))
        self.assertAlmostEqual(a["median_abs_error"], 0.2)
        # Without halves there is nothing to agree with.
        self.assertNotIn("agreeing", analysis.summarize(results, picks))


if __name__ == "__main__":
    unittest.main()

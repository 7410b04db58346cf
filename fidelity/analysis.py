"""The fidelity check's statistics, and the one place that reads the replayer's JSON.

Pure functions over plain numbers (no subprocesses, no clocks), so they are
tested on their own (analysis_test.py):

  median(xs), bootstrap_ci(xs)        an interval for a median, the replayer's (stats.h)
  paired_ratio(ref, xs), paired_tie   THE tie rule, as the replayer's (stats.h)
  tie_ranks(items, runs)              ranks where paired ties (else overlaps) tie
  replay_rounds(policy_json, phase)   ns/op per round from one policy's entry
  spearman(a, b)                      rank correlation of two rankings
  replay_figures(policy_json, phase)  ns/op and its interval from one policy's entry
  saving(base, xs)                    a saving and its interval, paired by round
  compare(insitu, replay, ops)        per-allocator saving vs glibc, predicted and actual
  pick_cost(insitu, replay[, pick])   in-situ time of the replay's pick (or the replayer's
                                      recommendation) over the in-situ best
  halves(insitu, replay, ops)         the program against itself: half its rounds scored
                                      against the other half, and the replay against the same
"""

import functools
import math
import random

# The in-situ baseline every saving is measured against, and the replay
# policy that stands for it.
BASELINE = "glibc"
BASELINE_POLICY = "malloc"
# A predicted saving counts as right when within this fraction of the real one.
SAVING_TOLERANCE = 0.25
# The replay's pick is good enough when its in-situ time is within this
# fraction of the in-situ best's, and a miss when beyond PICK_LIMIT.
PICK_TOLERANCE = 0.05
PICK_LIMIT = 0.15
# The fidelity target for a mean rank correlation: the program's own
# halves must reach it on a workload before a replay's miss there counts.
RHO_TARGET = 0.8
# How many random splits of the in-situ rounds halves() scores, and its seed.
HALF_SPLITS = 8
HALF_SEED = 1
# The replay's passes a prediction can be read from (see replay_figures).
PHASES = ("cold", "warm")


def median(xs):
    s = sorted(xs)
    n = len(s)
    if n == 0:
        raise ValueError("median of no values")
    mid = n // 2
    return s[mid] if n % 2 else (s[mid - 1] + s[mid]) / 2


# The bootstrap of replayer/measure/stats.h (MedianWithCi), mirrored: the
# same generator (std::mt19937_64), seed, index draw, resample order and
# percentile rule, so the same samples give the same interval to the bit
# (cpp_parity_test runs both on the same cases). kBootstrapSeed and
# kBootstrapResamples there; the parity test checks that they are these.
BOOTSTRAP_SEED = 0x616c6c6f63747263  # "alloctrc"
BOOTSTRAP_RESAMPLES = 2000


class Mt19937_64:
    """std::mt19937_64: the 64-bit Mersenne Twister, whose output the C++
    standard fixes (its 10000th from the default seed 5489 is
    9981545732273789042)."""

    _N, _M = 312, 156
    _MASK = (1 << 64) - 1
    _UPPER, _LOWER = 0xFFFFFFFF80000000, 0x7FFFFFFF
    _A = 0xB5026F5AA96619E9

    def __init__(self, seed=5489):
        mt = [seed & self._MASK]
        for i in range(1, self._N):
            prev = mt[-1]
            mt.append((6364136223846793005 * (prev ^ (prev >> 62)) + i) & self._MASK)
        self._mt = mt
        self._i = self._N

    def _twist(self):
        mt, n, m = self._mt, self._N, self._M
        for i in range(n):
            x = (mt[i] & self._UPPER) | (mt[(i + 1) % n] & self._LOWER)
            xa = x >> 1
            if x & 1:
                xa ^= self._A
            mt[i] = mt[(i + m) % n] ^ xa
        self._i = 0

    def __call__(self):
        if self._i >= self._N:
            self._twist()
        y = self._mt[self._i]
        self._i += 1
        y ^= (y >> 29) & 0x5555555555555555
        y ^= (y << 17) & 0x71D67FFFEDA60000
        y ^= (y << 37) & 0xFFF7EEE000000000
        y ^= y >> 43
        return y & self._MASK

    def index(self, n):
        """An index in [0, n) by multiply-shift, as the C++ draws one."""
        return (self() * n) >> 64


def _percentile_interval(values):
    """The 95% interval of sorted bootstrap values: the C++ rule, the
    floor(0.025 (R - 1))-th and the ceil(0.975 (R - 1))-th of R."""
    last = len(values) - 1
    return (values[int(math.floor(0.025 * last))], values[int(math.ceil(0.975 * last))])


@functools.lru_cache(maxsize=64)
def _resample_indices(n, resamples, seed):
    """The index draws of `resamples` resamples of n values from
    Mt19937_64(seed), in draw order: they depend on nothing else, so each
    (n, resamples, seed) is drawn once (the generator in Python is what a
    bootstrap spends its time on)."""
    rng = Mt19937_64(seed)
    return tuple(tuple(rng.index(n) for _ in range(n)) for _ in range(resamples))


def bootstrap_ci(xs, resamples=BOOTSTRAP_RESAMPLES, seed=BOOTSTRAP_SEED):
    """A percentile-bootstrap 95% interval for the median of xs, as
    replayer/measure/stats.h's MedianWithCi gives it for the same xs (in the
    same order): `resamples` resamples of len(xs) draws each, from
    Mt19937_64(seed). One value (or fewer than 2 resamples): the median."""
    if not xs:
        raise ValueError("bootstrap of no values")
    n = len(xs)
    if n == 1 or resamples < 2:
        m = median(xs)
        return (m, m)
    meds = sorted(median([xs[i] for i in draw])
                  for draw in _resample_indices(n, resamples, seed))
    return _percentile_interval(meds)


def overlaps(a, b):
    """Whether intervals a = (lo, hi) and b overlap (touching counts)."""
    return a[0] <= b[1] and b[0] <= a[1]


def _by_round(xs):
    return dict(xs) if isinstance(xs, dict) else dict(enumerate(xs))


# Fewer common rounds than this tell nothing apart (replayer/measure/stats.h
# kMinPairedRounds).
MIN_PAIRED_ROUNDS = 3


def paired_ratio(reference, subject):
    """reference / subject round by round, as (median, lo, hi) with the
    bootstrap 95% interval; None without a common round. Each side is a dict
    round -> value, or a list whose index is the round (runs made in rounds,
    A B C A B C, as the fidelity check and the replayer make them)."""
    ref, sub = _by_round(reference), _by_round(subject)
    ratios = [ref[r] / x for r, x in sorted(sub.items()) if r in ref and x > 0]
    if not ratios:
        return None
    if len(ratios) < MIN_PAIRED_ROUNDS:
        # One or two ratios give no interval: unknown, which includes 1
        # (the replayer's PairedTie: too few rounds to tell apart).
        return (median(ratios), 0.0, math.inf)
    lo, hi = bootstrap_ci(ratios)
    return (median(ratios), lo, hi)


def noise_margin(floor):
    """How far a noise floor (median, lo, hi[, n]) reads from 1 at its
    median, either way: max(median, 1 / median) - 1, as the replayer's
    NoiseMargin; 0 without a usable one (its NoiseFloorUsable: a median
    within [2/3, 3/2], from MIN_PAIRED_ROUNDS rounds or more where n is
    given)."""
    if floor is None or floor[0] is None:
        return 0.0
    if len(floor) > 3 and floor[3] is not None and floor[3] < MIN_PAIRED_ROUNDS:
        return 0.0
    if not 2.0 / 3 <= floor[0] <= 1.5:
        return 0.0
    return max(floor[0], 1 / floor[0]) - 1


def paired_tie(ratio, margin=0.0):
    """THE tie rule, the replayer's too (replayer/measure/stats.h PairedTie): two
    policies are tied when the 95% interval of their ratio paired by round
    (paired_ratio) includes 1, or lies within the noise floor, within
    [1/(1+m), 1+m] for the noise margin m. No common round (None): not tied;
    fewer than MIN_PAIRED_ROUNDS: the interval is (0, inf), so tied.
    """
    if ratio is None:
        return False
    _, lo, hi = ratio
    if lo <= 1 <= hi:
        return True
    m = max(margin, 0.0)
    return lo >= 1 / (1 + m) and hi <= 1 + m


def tie_ranks(items, runs=None, margin=0.0):
    """Ranks (1 = smallest value) of items, a dict name -> (value, lo, hi).

    Sorted by value; a run of items tied with one another (every pair) is a
    tie and shares the average of its ranks. Two items with per-round
    figures in `runs` (name -> dict round -> value, or list by round) tie by
    paired_tie of their paired_ratio under the noise margin; otherwise when
    their intervals overlap, and an item without an interval (lo, hi None)
    ties only with equal values.
    """
    runs = runs or {}

    def tied(a, b):
        if a in runs and b in runs:
            r = paired_ratio(runs[a], runs[b])
            if r is not None:
                return paired_tie(r, margin)
        v, lo, hi = items[a]
        gv, glo, ghi = items[b]
        if None in (lo, hi, glo, ghi):
            return v == gv
        return overlaps((lo, hi), (glo, ghi))

    order = sorted(items, key=lambda k: (items[k][0], k))
    ranks = {}
    i = 0
    while i < len(order):
        group = [order[i]]
        j = i + 1
        while j < len(order):
            ok = all(tied(order[j], g) for g in group)
            if not ok:
                break
            group.append(order[j])
            j += 1
        avg = (i + 1 + j) / 2  # ranks i+1 .. j
        for g in group:
            ranks[g] = avg
        i = j
    return ranks


def spearman(a, b):
    """Spearman's rho of two rank dicts over their common keys: the Pearson
    correlation of the ranks (exact with ties). None when undefined (fewer
    than two items, or one side all tied)."""
    keys = sorted(set(a) & set(b))
    if len(keys) < 2:
        return None
    xa = [a[k] for k in keys]
    xb = [b[k] for k in keys]
    ma = sum(xa) / len(xa)
    mb = sum(xb) / len(xb)
    cov = sum((x - ma) * (y - mb) for x, y in zip(xa, xb))
    va = sum((x - ma) ** 2 for x in xa)
    vb = sum((y - mb) ** 2 for y in xb)
    if va == 0 or vb == 0:
        return None
    return cov / math.sqrt(va * vb)


class ReplayFormatError(ValueError):
    pass


def replay_figures(p, phase="warm"):
    """(median ns/op, lo, hi) from one entry of the replayer's "policies".

    phase: "cold" (the first pass over the trace: fresh pages, empty caches,
    what a program that runs once pays) or "warm" (the later passes, the
    replayer's headline figure). Reads {"<phase>_ns_per_op": {"median": m,
    "ci95": [lo, hi]}}; for "warm" also the older {"ns_per_op": ...} forms:
    a dict like the above, or a number with "ns_per_op_min" and "spread_pct",
    where the interval is the runs' range [min, min + s% of m]. Raises
    ReplayFormatError naming the policy when the figure is not there.
    """
    if phase not in PHASES:
        raise ValueError(f"phase {phase!r}: one of {', '.join(PHASES)}")
    name = p.get("policy", "?")
    v = p.get(phase + "_ns_per_op")
    if v is None and phase == "warm":
        v = p.get("ns_per_op")
    if isinstance(v, dict):
        if not isinstance(v.get("median"), (int, float)):
            raise ReplayFormatError(f"policy {name}: {phase} ns/op has no numeric median")
        ci = v.get("ci95")
        if isinstance(ci, list) and len(ci) == 2 and all(isinstance(x, (int, float)) for x in ci):
            return (float(v["median"]), float(ci[0]), float(ci[1]))
        return (float(v["median"]), None, None)
    if isinstance(v, (int, float)) and phase == "warm":
        lo = p.get("ns_per_op_min")
        spread = p.get("spread_pct")
        if isinstance(lo, (int, float)) and isinstance(spread, (int, float)):
            return (float(v), float(lo), float(lo) + float(spread) / 100 * float(v))
        return (float(v), None, None)
    raise ReplayFormatError(f"policy {name}: no {phase} ns_per_op in the replayer's JSON")


def replay_rounds(p, phase="warm", ops=None, clock="cpu"):
    """{round: ns/op} of one entry of the replayer's "policies", from its
    "runs": the cold pass, or the mean of the warm passes, by the clock
    ("cpu_s" or "wall_s"), over the trace's memory ops, the cold pass's with
    the policy's process cost (what its malloc adds to a process's start and
    end, as the replayer counts it). {} when the entry has no runs or ops is
    unknown."""
    if not ops:
        return {}
    key = "wall_s" if clock == "wall" else "cpu_s"
    extra = p.get("process_cost_s", 0.0) if phase == "cold" else 0.0
    out = {}
    for run in p.get("runs") or []:
        passes = [q for q in run.get("passes", []) if q.get("kind") == phase]
        if not passes or "round" not in run:
            continue
        out[run["round"]] = 1e9 * (sum(q[key] for q in passes) / len(passes) + extra) / ops
    return out


def saving(base, xs):
    """(median saving ms, (lo, hi) its 95% interval in ms, paired) of xs
    against base, both lists of seconds.

    With as many runs of each, made in rounds (base's run r and xs' run r
    side by side in time, as the check interleaves them), the saving is
    paired by round: the median over rounds of base[r] - xs[r], so a slow
    stretch of the machine that slows both runs of a round cancels out.
    Otherwise the difference of the medians, with an interval from
    resampling each list on its own.
    """
    if len(base) == len(xs) and len(base) >= 2:
        d = [(b - x) * 1e3 for b, x in zip(base, xs)]
        return median(d), bootstrap_ci(d), True
    # Each list resampled on its own, with the bootstrap's generator and seed.
    rng = Mt19937_64(BOOTSTRAP_SEED)
    diffs = sorted((median([base[rng.index(len(base))] for _ in base]) -
                    median([xs[rng.index(len(xs))] for _ in xs])) * 1e3
                   for _ in range(BOOTSTRAP_RESAMPLES))
    return (median(base) - median(xs)) * 1e3, _percentile_interval(diffs), False


def compare(insitu, replay, ops, replay_runs=None, replay_margin=0.0):
    """Per-allocator figures of one workload or program.

    insitu: name -> list of seconds (the in-situ runs), with BASELINE among
    them. replay: name -> (ns/op, lo, hi) for the same names. ops: the
    trace's memory ops. Returns (rows, rho): rows per allocator with the
    in-situ median and interval (ms), the replay's time x ops (ms), the
    actual saving against BASELINE (ms, positive = faster; paired by round,
    see saving()) with its interval, the predicted saving, whether the
    actual saving is outside noise (its interval excludes 0) and the
    prediction's relative error; rho is the Spearman correlation of the two
    orderings (None when undefined). Ties follow paired_tie: in situ, paired
    by round when every allocator has as many runs (the check's rounds; no
    noise floor is measured there, so the margin is 0), else by overlapping
    intervals; in the replay, by replay_runs (name -> {round: ns/op},
    replay_rounds) under replay_margin (the replay's noise floor).
    """
    names = [n for n in insitu if n in replay]
    stats = {}
    for n in names:
        m = median(insitu[n]) * 1e3
        lo, hi = bootstrap_ci(insitu[n])
        stats[n] = (m, lo * 1e3, hi * 1e3)
    rows = []
    base = stats.get(BASELINE)
    rbase = replay.get(BASELINE)
    for n in names:
        m, lo, hi = stats[n]
        ns, rlo, rhi = replay[n]
        row = {
            "allocator": n,
            "insitu_ms": m,
            "insitu_ci_ms": [lo, hi],
            "runs": len(insitu[n]),
            "replay_ns_per_op": ns,
            "replay_interval_ns": [rlo, rhi] if rlo is not None else None,
            "replay_ms": ns * ops / 1e6,
        }
        if base is not None and rbase is not None and n != BASELINE:
            actual, (dlo, dhi), paired = saving(insitu[BASELINE], insitu[n])
            predicted = (rbase[0] - ns) * ops / 1e6
            significant = dlo > 0 or dhi < 0
            row["saved_ms"] = actual
            row["saved_ci_ms"] = [dlo, dhi]
            row["paired"] = paired
            row["predicted_saved_ms"] = predicted
            row["outside_noise"] = significant
            row["error"] = (predicted - actual) / abs(actual) if actual != 0 else None
            row["within_tolerance"] = (significant and row["error"] is not None and
                                       abs(row["error"]) <= SAVING_TOLERANCE)
        rows.append(row)
    lengths = {len(insitu[n]) for n in names}
    insitu_runs = ({n: insitu[n] for n in names}
                   if len(lengths) == 1 and min(lengths) >= 2 else None)
    rho = spearman(tie_ranks(stats, insitu_runs),
                   tie_ranks({n: replay[n] for n in names}, replay_runs, replay_margin))
    return rows, rho


def pick_cost(insitu, replay, pick=None):
    """What adopting the replay's pick costs in situ.

    insitu: name -> list of seconds by round (the in-situ runs); replay: name
    -> (ns/op, lo, hi). The pick is `pick` when given (the replayer's
    recommendation; None is returned if it was not run in situ), else the
    replay's fastest (smallest median ns/op; the first name of equal
    ones). The best is the in-situ fastest:
    with as many runs of each, made in rounds (at least MIN_PAIRED_ROUNDS),
    the one whose time over its round's fastest has the smallest median, so
    a slow stretch of the machine that slows a whole round cancels out (as
    saving() pairs); otherwise the smallest median. Returns {"pick", "best",
    "ratio": the pick's in-situ time over the best's (the median of the
    ratio by round when paired, else of the medians), "paired": [median, lo,
    hi] of paired_ratio(pick's runs, best's runs) (None without common
    rounds), "tied": whether paired_tie says the two are tied in situ,
    "within": ratio <= 1 + PICK_TOLERANCE}; None when no name is in both.
    """
    names = sorted(n for n in insitu if n in replay and insitu[n])
    if not names or (pick is not None and pick not in names):
        return None
    if pick is None:
        pick = min(names, key=lambda n: (replay[n][0], n))
    lengths = {len(insitu[n]) for n in names}
    rounds = min(lengths)
    paired_rounds = len(lengths) == 1 and rounds >= MIN_PAIRED_ROUNDS
    if paired_rounds:
        fastest = [min(insitu[n][r] for n in names) for r in range(rounds)]
        score = {n: median([insitu[n][r] / fastest[r] for r in range(rounds) if fastest[r] > 0])
                 for n in names}
    else:
        score = {n: median(insitu[n]) for n in names}
    best = min(names, key=lambda n: (score[n], n))
    paired = paired_ratio(insitu[pick], insitu[best]) if pick != best else (1.0, 1.0, 1.0)
    if paired_rounds and paired is not None:
        ratio = paired[0]
    else:
        ratio = median(insitu[pick]) / median(insitu[best])
    return {
        "pick": pick,
        "best": best,
        "ratio": ratio,
        "paired": list(paired) if paired is not None else None,
        "tied": pick == best or paired_tie(paired),
        "within": ratio <= 1 + PICK_TOLERANCE,
    }


def round_orders(names, rounds, seed):
    """The order of `names` in each of `rounds` in-situ rounds: rounds in
    pairs, a seeded random order and then the same reversed, so that over
    the pair each name runs once at an even and once at an odd place of the
    sequence of runs, whatever the number of names (with an odd number the
    round's own length moves the second's places by one, and the reversal
    keeps the change). A machine whose successive processes alternate
    between a fast and a slow core (docs/fidelity.md, "Where a run lands")
    then slows every name alike; in a fixed order it would slow the same
    names in every round."""
    rng = random.Random(seed)
    orders = []
    for r in range(rounds):
        if r % 2 == 0:
            order = list(names)
            rng.shuffle(order)
        else:
            order = orders[-1][::-1]
        orders.append(order)
    return orders


def half_splits(rounds, count=HALF_SPLITS, seed=HALF_SEED):
    """`count` splits of the rounds 0..rounds-1 into A, rounds // 2 of them
    drawn at random (seeded: the same splits every time), and B, the rest,
    each sorted; [] when a half would have fewer than MIN_PAIRED_ROUNDS."""
    if rounds // 2 < MIN_PAIRED_ROUNDS:
        return []
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        a = sorted(rng.sample(range(rounds), rounds // 2))
        out.append((a, [r for r in range(rounds) if r not in a]))
    return out


def _scores(results, picks):
    """A scorer's figures over splits: the median rank correlation (None if
    none is defined), the share of splits whose pick is within
    PICK_TOLERANCE of the best, and every saving's |error| outside noise."""
    rhos = [rho for _, rho in results if rho is not None]
    return {
        "rho": median(rhos) if rhos else None,
        "within": sum(1 for p in picks if p["within"]) / len(picks) if picks else None,
        "errors": [abs(r["error"]) for rows, _ in results for r in rows
                   if r.get("outside_noise") and r.get("error") is not None],
    }


def halves(insitu, replay, ops, replay_runs=None, replay_margin=0.0, splits=None):
    """How well the program predicts itself, and the replay beside it.

    insitu: name -> seconds by round (as many rounds each); replay, ops,
    replay_runs, replay_margin: as compare(). For each split of the rounds
    (half_splits), the program's half A stands in for a replay (its median
    as ns/op over the ops, its rounds for the ties) and is scored against
    half B as compare() and pick_cost() score a replay: rank correlation,
    the pick (A's fastest) within PICK_TOLERANCE of B's best, the saving
    against BASELINE predicted from A against B's. The replay is scored
    against the same halves B. A replay can agree with the program no
    better, on these rounds, than the program agrees with itself: the
    program's figures are the ceiling the machine's noise leaves.

    Returns {"splits": n, "program": _scores, "replay": _scores}, or None
    when the rounds are unequal or too few to halve."""
    names = [n for n in insitu if n in replay and insitu[n]]
    lengths = {len(insitu[n]) for n in names}
    if len(names) < 2 or len(lengths) != 1 or ops <= 0:
        return None
    splits = half_splits(lengths.pop()) if splits is None else splits
    if not splits:
        return None
    own, theirs = ([], []), ([], [])
    for a, b in splits:
        half_a = {n: [insitu[n][r] for r in a] for n in names}
        half_b = {n: [insitu[n][r] for r in b] for n in names}
        as_replay = {n: (median(xs) * 1e9 / ops, None, None) for n, xs in half_a.items()}
        as_runs = {n: [x * 1e9 / ops for x in xs] for n, xs in half_a.items()}
        own[0].append(compare(half_b, as_replay, ops, as_runs))
        own[1].append(pick_cost(half_b, as_replay))
        theirs[0].append(compare(half_b, replay, ops, replay_runs, replay_margin))
        theirs[1].append(pick_cost(half_b, replay))
    return {
        "splits": len(splits),
        "program": _scores(own[0], [p for p in own[1] if p]),
        "replay": _scores(theirs[0], [p for p in theirs[1] if p]),
    }


def _pick_totals(picks, prefix):
    return {
        prefix: len(picks),
        prefix + "_within_5pct": sum(1 for p in picks if p["within"]),
        prefix + "_beyond_15pct": sum(1 for p in picks if p["ratio"] > 1 + PICK_LIMIT),
        prefix + "_best_or_tied": sum(1 for p in picks if p["tied"]),
    }


def _half_totals(scores):
    rhos = [s["rho"] for s in scores if s["rho"] is not None]
    shares = [s["within"] for s in scores if s["within"] is not None]
    errors = [e for s in scores for e in s["errors"]]
    return {
        "mean_rho": sum(rhos) / len(rhos) if rhos else None,
        "rho_defined": len(rhos),
        # The expected count of workloads whose pick is within 5%, of "picked".
        "within_5pct": sum(shares),
        "picked": len(shares),
        "median_abs_error": median(errors) if errors else None,
        "pairs_outside_noise": len(errors),
    }


def _agreeing(results, picks, recommended, halved):
    """The replay's scores over all its rounds, on the workloads whose
    halves agree with each other as the targets ask of the replay: rank
    correlation at least RHO_TARGET (for the rank correlation), the pick
    within PICK_TOLERANCE in every split (for the picks), savings' median
    |error| within SAVING_TOLERANCE (for the savings). Elsewhere a miss may
    be the program's noise; here it is the replay's. The lists are aligned
    by workload (None where a workload has no figure)."""
    n = len(results)
    rhos, pick_sure, rec_sure, errors = [], [], [], []
    saving_workloads = 0
    for (rows, rho), pick, rec, h in zip(results, picks or [None] * n,
                                         recommended or [None] * n, halved):
        if h is None:
            continue
        own = h["program"]
        if own["rho"] is not None and own["rho"] >= RHO_TARGET and rho is not None:
            rhos.append(rho)
        if own["within"] == 1.0 and pick is not None:
            pick_sure.append(pick)
            if rec is not None:
                rec_sure.append(rec)
        if own["errors"] and median(own["errors"]) <= SAVING_TOLERANCE:
            saving_workloads += 1
            errors += [abs(r["error"]) for r in rows
                       if r.get("outside_noise") and r.get("error") is not None]
    return {
        "workloads": sum(1 for h in halved if h is not None),
        "rho_workloads": len(rhos),
        "mean_rho": sum(rhos) / len(rhos) if rhos else None,
        **_pick_totals(pick_sure, "picks"),
        **_pick_totals(rec_sure, "recommended"),
        "saving_workloads": saving_workloads,
        "pairs_outside_noise": len(errors),
        "median_abs_error": median(errors) if errors else None,
    }


def summarize(results, picks=None, recommended=None, halved=None):
    """Totals over workloads: results is a list of (rows, rho) of compare(),
    picks (optional) the pick_cost() of each, recommended (optional) the
    pick_cost() of each replayer's recommendation, halved (optional) the
    halves() of each (None entries left out); with halves, "agreeing" scores
    the replay where the program agrees with itself (_agreeing)."""
    agreeing = (_agreeing(results, picks, recommended, halved)
                if halved and len(halved) == len(results) and any(halved) else None)
    picks = [p for p in picks or [] if p is not None]
    recommended = [p for p in recommended or [] if p is not None]
    halved = [h for h in halved or [] if h is not None]
    rhos = [rho for _, rho in results if rho is not None]
    scored = [r for rows, _ in results for r in rows
              if r.get("outside_noise") and r.get("error") is not None]
    errors = [abs(r["error"]) for r in scored]
    # Which way the predictions miss, as predicted over saved: a miss the
    # noise makes falls on both sides of 1, one the replay makes (what it
    # does not time) on one side. Below 0: none, or of the opposite sign.
    ratios = [r["predicted_saved_ms"] / r["saved_ms"] for r in scored
              if r.get("predicted_saved_ms") is not None and r.get("saved_ms")]
    out = {
        "workloads": len(results),
        "rho_defined": len(rhos),
        "rho_at_least_0_9": sum(1 for r in rhos if r >= 0.9),
        "mean_rho": sum(rhos) / len(rhos) if rhos else None,
        "pairs_outside_noise": len(errors),
        "pairs_within_25pct": sum(1 for e in errors if e <= SAVING_TOLERANCE),
        "median_abs_error": median(errors) if errors else None,
        "median_predicted_over_saved": median(ratios) if ratios else None,
        "pairs_under": sum(1 for x in ratios if 0 < x < 1),
        "pairs_over": sum(1 for x in ratios if x > 1),
        "pairs_opposite": sum(1 for x in ratios if x <= 0),
        **_pick_totals(picks, "picks"),
        "worst_pick_ratio": max((p["ratio"] for p in picks), default=None),
        **_pick_totals(recommended, "recommended"),
        "worst_recommended_ratio": max((p["ratio"] for p in recommended), default=None),
    }
    if halved:
        out["halves"] = {
            "workloads": len(halved),
            "splits": max(h["splits"] for h in halved),
            "program": _half_totals([h["program"] for h in halved]),
            "replay": _half_totals([h["replay"] for h in halved]),
        }
    if agreeing:
        out["agreeing"] = agreeing
    return out

"""The fidelity check's statistics, and the one place that reads the replayer's JSON.

Pure functions over plain numbers (no subprocesses, no clocks), so they are
tested on their own (analysis_test.py):

  median(xs), bootstrap_ci(xs)        an interval for a median
  tie_ranks(items)                    ranks where overlapping intervals tie
  spearman(a, b)                      rank correlation of two rankings
  replay_figures(policy_json, phase)  ns/op and its interval from one policy's entry
  saving(base, xs)                    a saving and its interval, paired by round
  compare(insitu, replay, ops)        per-allocator saving vs glibc, predicted and actual
"""

import math
import random

# The in-situ baseline every saving is measured against, and the replay
# policy that stands for it.
BASELINE = "glibc"
BASELINE_POLICY = "malloc"
# A predicted saving counts as right when within this fraction of the real one.
SAVING_TOLERANCE = 0.25
# The replay's passes a prediction can be read from (see replay_figures).
PHASES = ("cold", "warm")


def median(xs):
    s = sorted(xs)
    n = len(s)
    if n == 0:
        raise ValueError("median of no values")
    mid = n // 2
    return s[mid] if n % 2 else (s[mid - 1] + s[mid]) / 2


def bootstrap_ci(xs, iterations=2000, level=0.95, seed=12345):
    """A percentile-bootstrap interval for the median of xs (deterministic)."""
    if not xs:
        raise ValueError("bootstrap of no values")
    if len(xs) == 1:
        return (xs[0], xs[0])
    rng = random.Random(seed)
    n = len(xs)
    meds = sorted(median([xs[rng.randrange(n)] for _ in range(n)]) for _ in range(iterations))
    lo = meds[int(math.floor((1 - level) / 2 * (iterations - 1)))]
    hi = meds[int(math.ceil((1 + level) / 2 * (iterations - 1)))]
    return (lo, hi)


def overlaps(a, b):
    """Whether intervals a = (lo, hi) and b overlap (touching counts)."""
    return a[0] <= b[1] and b[0] <= a[1]


def tie_ranks(items):
    """Ranks (1 = smallest value) of items, a dict name -> (value, lo, hi).

    Sorted by value; a run of items whose intervals all overlap one another
    is a tie and shares the average of its ranks. An item without an
    interval (lo, hi None) ties only with equal values.
    """
    order = sorted(items, key=lambda k: (items[k][0], k))
    ranks = {}
    i = 0
    while i < len(order):
        group = [order[i]]
        j = i + 1
        while j < len(order):
            v, lo, hi = items[order[j]]
            ok = True
            for g in group:
                gv, glo, ghi = items[g]
                if None in (lo, hi, glo, ghi):
                    ok = ok and v == gv
                else:
                    ok = ok and overlaps((lo, hi), (glo, ghi))
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
    rng = random.Random(12345)
    diffs = sorted((median([base[rng.randrange(len(base))] for _ in base]) -
                    median([xs[rng.randrange(len(xs))] for _ in xs])) * 1e3
                   for _ in range(2000))
    return ((median(base) - median(xs)) * 1e3, (diffs[int(0.025 * 1999)],
                                                  diffs[int(math.ceil(0.975 * 1999))]), False)


def compare(insitu, replay, ops):
    """Per-allocator figures of one workload or program.

    insitu: name -> list of seconds (the in-situ runs), with BASELINE among
    them. replay: name -> (ns/op, lo, hi) for the same names. ops: the
    trace's memory ops. Returns (rows, rho): rows per allocator with the
    in-situ median and interval (ms), the replay's time x ops (ms), the
    actual saving against BASELINE (ms, positive = faster; paired by round,
    see saving()) with its interval, the predicted saving, whether the
    actual saving is outside noise (its interval excludes 0) and the
    prediction's relative error; rho is the Spearman correlation of the two
    orderings (None when undefined; in situ, allocators whose intervals of
    the median overlap are tied).
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
    rho = spearman(tie_ranks(stats), tie_ranks({n: replay[n] for n in names}))
    return rows, rho


def summarize(results):
    """Totals over workloads: results is a list of (rows, rho) of compare()."""
    rhos = [rho for _, rho in results if rho is not None]
    errors = [abs(r["error"]) for rows, _ in results for r in rows
              if r.get("outside_noise") and r.get("error") is not None]
    return {
        "workloads": len(results),
        "rho_defined": len(rhos),
        "rho_at_least_0_9": sum(1 for r in rhos if r >= 0.9),
        "mean_rho": sum(rhos) / len(rhos) if rhos else None,
        "pairs_outside_noise": len(errors),
        "pairs_within_25pct": sum(1 for e in errors if e <= SAVING_TOLERANCE),
        "median_abs_error": median(errors) if errors else None,
    }

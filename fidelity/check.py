"""fidelity check: does the replay predict what the program itself gets?

(Over 500 lines: one script a person runs by hand, its steps in order --
runs in situ, traces, replays, the comparison and its tables; the
statistics it shares with the replayer are in analysis.py.)

  bazel run //fidelity:check -- [--workloads=LIST|all|mt] [--allocators=LIST]
      [--runs=5] [--touch=first,auto] [--phase=cold,warm] [--threads=auto,each,one]
      [--clock=auto|cpu|wall] [--param=WORKLOAD:name=value] [--format=table|json] [--out=FILE]
  bazel run //fidelity:check -- [flags] --program -- PROG ARGS...

For each built-in workload: runs it in situ (//fidelity:insitu: the very
function `record` traces, TraceAllocator in its containers) under each
allocator, set up as a user's instrumented program is set up by `replayer
--in_situ`: ALLOCTRACE_POLICY=std under glibc and under tcmalloc, jemalloc
and mimalloc by LD_PRELOAD, and ALLOCTRACE_POLICY=<catalog policy> for the
pools (TraceAllocator's run-time switch; no allocator list of the check's
own: the names are the switch's, `insitu --list`) --
each run a fresh process, runs interleaved across allocators in rounds
(each pair of rounds a random order and its reverse: analysis.round_orders);
records the workload's trace (//tracer:record); replays it through the
matching policies (//replayer --format=json), once per --touch mode (auto,
the replayer's default, walks a capture of CPython under PYTHONMALLOC=malloc
and is the program touch elsewhere), and
reads each replay's cold pass and its warm passes (--phase); and, per
model (touch mode and phase), reports per allocator the in-situ time (median, bootstrap 95% interval),
the replay's ns/op x ops, the saving against glibc in situ and as the replay
predicts it, and per workload Spearman's rank correlation of the two
orderings, where allocators are tied as the replayer ties them
(analysis.paired_tie: the ratio paired by round has a 95% interval that
includes 1 or lies within the noise floor), and what adopting the replay's
pick (its fastest) would cost: the pick's in-situ time over the in-situ
best's (analysis.pick_cost; the target is within 5%, never beyond 15%).

Multi-threaded workloads (--workloads=mt: producer_consumer, larson,
migration, thread_map_churn) run under the mallocs and the catalog's
thread-safe policies only (a policy that is not thread-safe is skipped, and
said so); their traces are replayed as the replayer does by default
(--threads=auto: per thread where the trace has container arenas, on one
thread where it has none), per thread (--threads=each: one OS thread per
traced thread) and on one thread in the recorded order (--threads=one: no
contention), each a model of its own ("touch/phase", "touch/phase/each"
and "touch/phase/one"; auto reuses the replay of the mode it resolves to),
and the report gives the replay's speed in each (memory ops per second of a
pass's wall time, glibc malloc's policy). A trace of one thread is replayed
once: every mode is the same replay.

With --program, PROG ARGS is run whole under each malloc (the process's
time), captured (//tracer:capture) and replayed the same way (in every
--threads mode when several threads allocated). A program's time is
its whole process's, so its replays count what each malloc library adds
to a process's start and end (the replayer's --process_cost); a
workload's is timed inside insitu, so its replays do not. In-situ time
(--clock=auto) is wall time for multi-threaded workloads and programs
(contention and waiting are what the program feels, as the per-thread
replay ranks), CPU time otherwise (it leaves out waiting for a core on a
shared machine).

The driver is Python because its work is running processes and reading
JSON; the timed code is C++ (insitu, replayer). Statistics: analysis.py.
Exit status: 0 with the report; 1 when a run fails (the message names the
command); 2 for bad flags.
"""

import argparse
import datetime
import json
import os
import platform
import re
import resource
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import analysis  # noqa: E402  (beside this file, in the runfiles too)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INSITU = os.path.join(ROOT, "fidelity", "insitu")
RECORD = os.path.join(ROOT, "tracer", "record")
CAPTURE = os.path.join(ROOT, "tracer", "capture", "capture")
REPLAYER = os.path.join(ROOT, "replayer", "replayer")

# The replayer's list of the mallocs it preloads and where it looks for them,
# read as text (the replayer includes it as C++).
PRELOADED_MALLOCS = os.path.join(ROOT, "replayer", "engine", "allocators",
                                 "preloaded_mallocs.inc")
MULTIARCH_TRIPLETS = {"x86_64": "x86_64-linux-gnu", "aarch64": "aarch64-linux-gnu"}


def read_preloaded_mallocs(text, machine=None):
    """({policy: file}, [directory]) from the text of preloaded_mallocs.inc:
    its ALLOCTRACE_PRELOADED_MALLOC and ALLOCTRACE_LIBRARY_DIR entries, in
    order, "<multiarch>" in a directory replaced by the machine's triplet as
    the replayer replaces it (a directory with it is left out on another
    machine). ValueError for any other line than a comment or an entry."""
    triplet = MULTIARCH_TRIPLETS.get(machine or platform.machine())
    preloads, dirs = {}, []
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("//"):
            continue
        m = re.fullmatch(r'(ALLOCTRACE_\w+)\(\s*("[^"\\]*"(?:\s*,\s*"[^"\\]*")*)\s*\)', line)
        args = re.findall(r'"([^"\\]*)"', m.group(2)) if m else []
        if m and m.group(1) == "ALLOCTRACE_PRELOADED_MALLOC" and len(args) == 4:
            preloads[args[0]] = args[1]
        elif m and m.group(1) == "ALLOCTRACE_LIBRARY_DIR" and len(args) == 1:
            if "<multiarch>" in args[0]:
                if triplet is None:
                    continue
                args[0] = args[0].replace("<multiarch>", triplet)
            dirs.append(args[0])
        else:
            raise ValueError(f"preloaded_mallocs.inc:{number}: not an entry: {line}")
    if not preloads or not dirs:
        raise ValueError("preloaded_mallocs.inc: no mallocs or no directories")
    return preloads, dirs


with open(PRELOADED_MALLOCS) as f:
    PRELOADS, LIB_DIRS = read_preloaded_mallocs(f.read())
MALLOCS = ["glibc"] + list(PRELOADS)

DEFAULT_WORKLOADS = ["simple_map", "fixed_priority_queue", "remove_if", "random", "list_churn",
                     "shared_ptr_new", "make_shared"]
# Catalog policies, run in situ by ALLOCTRACE_POLICY (boost_fast_pool is no
# catalog policy: the switch, like replayer --in_situ, cannot run it).
DEFAULT_ALLOCATORS = MALLOCS + ["slab/st/stack", "slab/st/single", "pool/simple/exp/st/stack/free",
                                "pool/boundary/exp/st/stack/free"]
# The multi-threaded workloads' defaults: the mallocs and thread-safe pools of
# the catalog, one pool per container and one for the process.
DEFAULT_MT_ALLOCATORS = MALLOCS + ["slab/mt/stack", "slab/mt/single", "small_node/mt/single",
                                   "pool/boundary/exp/mt/single/free"]
# Sizes at which a run takes tens of milliseconds, so that the program's
# steady state, not its start, is timed. --param overrides any of them.
DEFAULT_PARAMS = {
    "simple_map": ["entries=100000"],
    "fixed_priority_queue": ["capacity=20000", "inserts=400000"],
    "remove_if": ["entries=100000"],
    "random": ["entries=30000", "operations=200000"],
    "list_churn": ["initial=1000", "operations=200000"],
    "shared_ptr_new": ["nodes=50000", "iterations=200", "inserts_per_iteration=500"],
    "make_shared": ["nodes=50000", "iterations=200", "inserts_per_iteration=500"],
    "allocate_shared": ["nodes=50000", "iterations=200", "inserts_per_iteration=500"],
    "unordered_map": ["entries=50000", "operations=200000"],
    "producer_consumer": ["messages=50000"],
    # 16 threads: at 10,000 operations each (about 10 ms) their start and
    # each malloc's per-thread setup, which no trace holds, weigh as much
    # as the calls; at 100,000 (about 60 ms) the calls outweigh them
    # (docs/fidelity.md, "Larson's size").
    "larson": ["operations=100000"],
    "migration": ["operations=20000"],
    "thread_map_churn": ["operations=40000"],
}
TOUCH_MODES = ["none", "first", "whole", "program", "walk", "auto"]
THREAD_MODES = ["auto", "each", "one"]


class CheckError(Exception):
    """A run failed; the message says which and why."""


def progress(message):
    if sys.stderr.isatty():
        sys.stderr.write("\r\033[K" + message)
        sys.stderr.flush()


def find_library(name):
    for d in LIB_DIRS:
        path = os.path.join(d, name)
        if os.access(path, os.R_OK):
            return path
    return None


def env_for(allocator, instrumented=False):
    """The environment `allocator` runs under, as replayer --in_situ sets it
    up: a malloc by LD_PRELOAD (and, in an instrumented program,
    ALLOCTRACE_POLICY=std: TraceAllocator serves from operator new), a pool
    policy by ALLOCTRACE_POLICY alone."""
    env = dict(os.environ)
    for k in ("LD_PRELOAD", "ALLOCTRACE_POLICY", "ALLOCTRACE_POLICY_ACK_FD"):
        env.pop(k, None)
    if allocator in PRELOADS:
        env["LD_PRELOAD"] = find_library(PRELOADS[allocator])
    if instrumented:
        env["ALLOCTRACE_POLICY"] = "std" if allocator in MALLOCS else allocator
    return env


def run(cmd, env=None, cwd=None, stdout=subprocess.PIPE):
    try:
        p = subprocess.run(cmd, env=env, cwd=cwd, stdout=stdout, stderr=subprocess.PIPE,
                           text=True, check=False)
    except OSError as e:
        raise CheckError(f"cannot run {cmd[0]}: {e}") from e
    if p.returncode != 0:
        tail = (p.stderr or "").strip().splitlines()[-3:]
        raise CheckError(f"{' '.join(cmd)} exited {p.returncode}: {' / '.join(tail)}")
    return p


def replay(trace, policies, runs, touch, phases, threads="auto", process_cost=True):
    """The replayer's figures for `policies` on `trace`:
    ({phase: {policy: (ns, lo, hi)}}, trace_json). One replay gives both
    phases: its cold pass and its warm passes. Every policy makes `runs`
    runs (--race=false: none is eliminated); threads is the replayer's
    --threads (auto, each or one); process_cost the replayer's
    --process_cost: whether a malloc's cold figure counts what its library
    adds to a process's start and end, as an in-situ time of a whole
    process does and a workload's (timed inside the process) does not."""
    cmd = [REPLAYER, "--format=json", "--quiet", f"--min_runs={runs}", f"--max_runs={runs}",
           "--race=false", f"--touch={touch}", f"--threads={threads}",
           f"--process_cost={'true' if process_cost else 'false'}",
           "--policies=" + ",".join(policies), trace]
    out = run(cmd).stdout
    try:
        doc = json.loads(out)
        # The trace's own clock (--clock=auto: cpu on one thread, wall per
        # thread), else the report's.
        clock = doc["traces"][0].get("clock") or doc.get("clock", "cpu")
        t = dict(doc["traces"][0], clock="cpu" if clock == "auto" else clock,
                 rank_by=doc.get("rank_by", "cold"))
        figures = {phase: {} for phase in phases}
        for p in t["policies"]:
            if p.get("status", "ok") != "ok":
                raise CheckError(f"replay of {trace} with {p.get('policy')} failed: "
                                 f"{p.get('error') or p.get('skipped')}")
            for phase in phases:
                figures[phase][p["policy"]] = analysis.replay_figures(p, phase)
        return figures, t
    except (ValueError, KeyError, IndexError, TypeError) as e:
        raise CheckError(f"cannot read the replayer's JSON for {trace}: {e}") from e


def available(allocators):
    """(usable allocators, {skipped: reason})."""
    usable, skipped = [], {}
    for a in allocators:
        if a in PRELOADS and find_library(PRELOADS[a]) is None:
            skipped[a] = PRELOADS[a] + " is not installed"
        else:
            usable.append(a)
    return usable, skipped


def check_workload(name, params, allocators, args, workdir, multi_threaded=False):
    """In situ, record, replay, compare one built-in workload."""
    skipped = {}
    if multi_threaded:
        skipped = {a: "not thread-safe" for a in allocators
                   if a not in MALLOCS and a not in args.mt_allocators}
        allocators = [a for a in allocators if a not in skipped]
    trace = os.path.join(workdir, name + ".trace")
    # One comma-separated --param: a repeated flag would keep only its last.
    param_flags = ["--param=" + ",".join(params)] if params else []
    run([RECORD, f"--workload={name}", f"--out={trace}", f"--seed={args.seed}"] + param_flags)
    samples = {"cpu": {}, "wall": {}}
    policy_of = {}
    for r, order in enumerate(analysis.round_orders(allocators, args.runs, args.seed)):
        for a in order:
            progress(f"{name}: in situ run {r + 1}/{args.runs} {a}")
            cmd = [INSITU, f"--workload={name}", f"--seed={args.seed}"] + param_flags
            out = run(cmd, env=env_for(a, instrumented=True)).stdout
            try:
                line = json.loads(out.strip().splitlines()[-1])
            except (ValueError, IndexError) as e:
                raise CheckError(f"insitu printed no result for {name} {a}: {out!r}") from e
            if a in PRELOADS and PRELOADS[a] not in line["malloc"]:
                raise CheckError(f"LD_PRELOAD of {PRELOADS[a]} did not take effect "
                                 f"(malloc is from {line['malloc']})")
            if line["policy"] != ("std" if a in MALLOCS else a):
                raise CheckError(f"ALLOCTRACE_POLICY for {a} did not take effect "
                                 f"(the switch resolved {line['policy']})")
            policy_of[a] = a if a in PRELOADS else line["replay_policy"]
            samples["cpu"].setdefault(a, []).append(line["cpu_seconds"])
            samples["wall"].setdefault(a, []).append(line["seconds"])
    entry = {"kind": "workload", "name": name, "params": " ".join(params), "trace": trace,
             "multi_threaded": multi_threaded, "replay": {}}
    if skipped:
        entry["skipped"] = skipped
    return finish(entry, samples, policy_of, trace, args, process_cost=False)


def check_program(program, allocators, args, workdir):
    """In situ (the whole process), capture, replay, compare one program."""
    cwd = os.environ.get("BUILD_WORKING_DIRECTORY") or os.getcwd()
    trace = os.path.join(workdir, "program.trace")
    samples = {"cpu": {}, "wall": {}}
    for r, order in enumerate(analysis.round_orders(allocators, args.runs, args.seed)):
        for a in order:
            progress(f"{os.path.basename(program[0])}: in situ run {r + 1}/{args.runs} {a}")
            u0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            run(program, env=env_for(a), cwd=cwd, stdout=subprocess.DEVNULL)
            wall = time.perf_counter() - t0
            u1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = (u1.ru_utime + u1.ru_stime) - (u0.ru_utime + u0.ru_stime)
            samples["cpu"].setdefault(a, []).append(cpu)
            samples["wall"].setdefault(a, []).append(wall)
    run([CAPTURE, f"--out={trace}", "--"] + program, cwd=cwd, stdout=subprocess.DEVNULL)
    policy_of = {a: (a if a in PRELOADS else analysis.BASELINE_POLICY) for a in allocators}
    entry = {"kind": "program", "name": " ".join(program), "params": "", "trace": trace,
             "replay": {}}
    return finish(entry, samples, policy_of, trace, args)


def insitu_json(seconds):
    o = {}
    for a, xs in seconds.items():
        lo, hi = analysis.bootstrap_ci(xs)
        o[a] = {"seconds": xs, "median_ms": analysis.median(xs) * 1e3,
                "ci95_ms": [lo * 1e3, hi * 1e3]}
    return o


def model_name(touch, phase, threads="auto"):
    """"touch/phase" for the replayer's default (--threads=auto, the only
    one of a one-thread trace), "touch/phase/each" and "touch/phase/one"
    for --threads=each and one."""
    return f"{touch}/{phase}" + ("" if threads == "auto" else f"/{threads}")


def models(args):
    """The replay models compared: each --touch mode read from each --phase,
    in each --threads mode (an entry of one thread has the first's only)."""
    return [model_name(t, ph, th) for th in args.threads for t in args.touch for ph in args.phase]


def entry_models(doc, e):
    """The models of entry e, in the report's order (older reports named them
    by touch mode alone and have no "models")."""
    return [m for m in (doc.get("models") or doc["touch"]) if m in e["replay"]]


def median_pass(p, kind, key="wall_s"):
    """The median over runs of one policy's pass time (the cold pass, or the
    mean of the warm passes), seconds; None without runs."""
    xs = []
    for run_ in p.get("runs") or []:
        passes = [q[key] for q in run_.get("passes", []) if q.get("kind") == kind and key in q]
        if passes:
            xs.append(sum(passes) / len(passes))
    return analysis.median(xs) if xs else None


def finish(entry, samples, policy_of, trace, args, process_cost=True):
    """Replays the trace in every model and compares it with the in-situ
    samples ({"cpu"|"wall": {allocator: [seconds by round]}})."""
    multi = None
    for touch in args.touch:
        # The replay each mode ran, by what it was ("each" or "one"): auto
        # is one of them (the replayer's ReplaysPerThread), so the other
        # mode it resolved to reuses its replay rather than run again.
        ran = {}
        for threads in args.threads:
            if threads != "auto" and multi is False:
                continue  # one thread: every mode is the same replay
            if touch == "walk" and threads == "each":
                continue  # a walk replays on one thread (auto is one)
            if threads in ran:
                by_phase, t = ran[threads]
            else:
                progress(f"{entry['name'][:40]}: replaying, --touch={touch} --threads={threads}")
                by_phase, t = replay(trace, sorted(set(policy_of.values())), args.runs, touch,
                                     args.phase, threads, process_cost)
                ran[threads] = ran["each" if (t.get("replay_threads") or 1) > 1 else "one"] = (
                    by_phase, t)
            if multi is None:
                multi = (t.get("threads") or 1) > 1
                clock = args.clock if args.clock != "auto" else ("wall" if multi else "cpu")
                seconds = samples[clock]
                entry["clock"] = clock
                entry["threads"] = t.get("threads") or 1
                entry["insitu"] = insitu_json(seconds)
                # The other clock's figures too, kept for reading, not compared.
                other = "cpu" if clock == "wall" else "wall"
                entry["insitu_" + other] = insitu_json(samples[other])
            compare_replay(entry, seconds, policy_of, t, by_phase, touch, threads,
                           samples["cpu" if clock == "wall" else "wall"])
    if entry.get("arena_events") == 0:
        entry["note"] = ("the trace has one arena (the global heap): it cannot tell containers "
                         "apart, so a stack-holding pool gets one pool in the replay")
    return entry


def allocator_of(policy, policy_of):
    """The allocator run in situ as `policy` (policy_of: allocator ->
    policy), or None."""
    return next((a for a, p in sorted(policy_of.items()) if p == policy), None)


def recommended_allocator(t, policy_of):
    """The allocator whose policy the replayer's verdict on the trace `t`
    recommends, or None (no verdict, or a policy not run in situ). On a
    trace without container arenas the verdict recommends a malloc (what
    the program adopts unchanged) and names the pool it would recommend
    were the containers instrumented (if_instrumented): a built-in
    workload runs that pool in situ as an instrumented program would, so
    that one is what is measured (a captured program runs no pool in
    situ: its malloc is)."""
    verdict = t.get("verdict") or {}
    for policy in ((verdict.get("if_instrumented") or {}).get("policy"),
                   verdict.get("recommended")):
        allocator = allocator_of(policy, policy_of)
        if allocator is not None:
            return allocator
    return None


def compare_replay(entry, seconds, policy_of, t, by_phase, touch, threads, other_seconds=None):
    """One replay (touch and threads mode, both phases) against the in-situ
    seconds: entry["replay"][model] per phase, and the replay's speed. The
    rank correlation and the pick's cost against the other clock's in-situ
    times (other_seconds) are kept under "other_clock", for reading: on a
    loaded machine wall time mostly measures waiting for a core."""
    entry["ops"] = t["ops"]
    entry["arena_events"] = t.get("arena_events")
    # The replay's speed: memory ops per second of a pass's wall time, on
    # glibc malloc's policy (the same allocator in every mode).
    base = next((p for p in t["policies"] if p["policy"] == analysis.BASELINE_POLICY), None)
    if base is not None:
        speed = {"replay_threads": t.get("replay_threads", 1), "clock": t.get("clock")}
        for kind in ("cold", "warm"):
            w = median_pass(base, kind)
            speed[f"{kind}_ops_per_s"] = t["ops"] / w if w else None
        entry.setdefault("replay_speed", {})[f"{touch}/{threads}"] = speed
    for phase, figures in by_phase.items():
        rep = {d: figures[p] for d, p in policy_of.items()}
        # The replay's ties as the replayer decides them: paired by
        # round, within its noise floor (of the ranking pass only).
        runs_of = {p["policy"]: p for p in t["policies"]}
        rep_runs = {d: analysis.replay_rounds(runs_of.get(p, {}), phase, t["ops"],
                                              t.get("clock", "cpu"))
                    for d, p in policy_of.items()}
        floor = t.get("noise_floor") or {}
        margin = (analysis.noise_margin((floor["median"],) + tuple(floor["ci95"])
                                        + (floor.get("n"),))
                  if phase == t.get("rank_by") and "ci95" in floor else 0.0)
        rows, rho = analysis.compare(seconds, rep, t["ops"], rep_runs, margin)
        for row in rows:
            row["policy"] = policy_of[row["allocator"]]
            # In its ns/op, the cold pass's over the ops (the replayer's --process_cost).
            row["process_cost_ms"] = 1e3 * runs_of.get(row["policy"], {}).get("process_cost_s", 0.0)
        model = {"rows": rows, "rho": rho, "pick": analysis.pick_cost(seconds, rep),
                 "threads": threads, "clock": t.get("clock"), "replay_margin": margin}
        # What the user is told to adopt: the replayer's verdict (of the
        # pass it ranks by), which ties the close ones and takes the first
        # of them in its fixed order, not the replay's fastest.
        recommended = recommended_allocator(t, policy_of) if phase == t.get("rank_by") else None
        if recommended is not None:
            model["recommended"] = analysis.pick_cost(seconds, rep, recommended)
            # The verdict's equally fast, the one its memory step passed
            # over, and the replay's ns/op by round: another rule of choice
            # can be scored from a saved report.
            verdict = t.get("verdict") or {}
            model["equally_fast"] = sorted(a for a, p in policy_of.items()
                                           if p in (verdict.get("equally_fast") or []))
            model["memory_passed_over"] = allocator_of(verdict.get("memory_passed_over"), policy_of)
        model["replay_rounds"] = {a: [r[k] for k in sorted(r)] for a, r in rep_runs.items()}
        entry["replay"][model_name(touch, phase, threads)] = model
        if other_seconds:
            _, rho_other = analysis.compare(other_seconds, rep, t["ops"], rep_runs, margin)
            entry["replay"][model_name(touch, phase, threads)]["other_clock"] = {
                "clock": "cpu" if entry.get("clock") == "wall" else "wall", "rho": rho_other,
                "pick": analysis.pick_cost(other_seconds, rep)}


def fmt(v, spec="{:.1f}", none="-"):
    return none if v is None else spec.format(v)


def format_pick(p):
    """"slab/st/stack 1.04x glibc [0.99, 1.08]": the pick, its in-situ time
    over the best's (and the best, when another) with the paired interval;
    "~" when paired rounds cannot tell the two apart."""
    if not p:
        return "-"
    if p["pick"] == p["best"]:
        return f"{p['pick']} (the best)"
    ci = ""
    if p.get("paired") and p["paired"][2] != float("inf"):
        ci = f" [{p['paired'][1]:.2f}, {p['paired'][2]:.2f}]"
    return f"{p['pick']} {p['ratio']:.2f}x{'~' if p['tied'] else ''} {p['best']}{ci}"


def format_table(doc):
    clock = doc.get("clock", "wall")
    if clock == "auto":
        clock = "auto: wall multi-threaded, else cpu"
    lines = [f"fidelity check: {doc['machine']}, {doc['date']}, {doc['runs']} in-situ runs "
             f"per allocator (interleaved, {clock} time), replay {doc['runs']} runs"]
    for e in doc["entries"]:
        # Reports written before phases were compared name their models by
        # touch mode alone (they read the warm passes).
        touches = entry_models(doc, e)
        lines.append("")
        head = display_name(e) + (f" ({e['params']})" if e["params"] else "")
        threads = e.get("threads", 1)
        lines.append(f"{head}: {e['ops']} memory ops" +
                     (f", {threads} threads" if threads > 1 else "") +
                     (f"; in situ {e['clock']} time" if "clock" in e else ""))
        if e.get("skipped"):
            lines.append("  skipped: " + ", ".join(f"{a} ({why})" for a, why in e["skipped"].items()))
        if e.get("replay_speed"):
            lines.append("  replay speed (glibc malloc, memory ops per second of a pass's wall "
                         "time, cold/warm): " + ", ".join(
                             f"{k} {fmt(v.get('cold_ops_per_s'), '{:.3g}')}/"
                             f"{fmt(v.get('warm_ops_per_s'), '{:.3g}')}"
                             f" ({v.get('replay_threads', 1)} thread"
                             f"{'s' if v.get('replay_threads', 1) != 1 else ''})"
                             for k, v in e["replay_speed"].items()))
        lines.append("  rank correlation: " + ", ".join(
            f"{t} {fmt(e['replay'][t]['rho'], '{:.2f}', 'n/a')}" for t in touches))
        if any(e["replay"][t].get("pick") for t in touches):
            lines.append("  replay's pick, in situ over the in-situ best: " + ", ".join(
                f"{t} {format_pick(e['replay'][t].get('pick'))}" for t in touches))
        if any(e["replay"][t].get("recommended") for t in touches):
            lines.append("  the replayer recommends, in situ over the in-situ best: " + ", ".join(
                f"{t} {format_pick(e['replay'][t]['recommended'])}" for t in touches
                if e["replay"][t].get("recommended")))
        others = [e["replay"][t].get("other_clock") for t in touches]
        if any(others):
            lines.append(f"  against in-situ {next(o for o in others if o)['clock']} time: "
                         + ", ".join(f"{t} rho {fmt(o['rho'], '{:.2f}', 'n/a')}, pick "
                                     f"{format_pick(o.get('pick'))}"
                                     for t, o in zip(touches, others) if o))
        if e.get("note"):
            lines.append("  note: " + e["note"])
        hdr = f"  {'allocator':<30} {'in situ ms':>10} {'95% interval':>17} {'saved':>7}"
        for t in touches:
            hdr += f" | {t + ' ns/op':>18} {'x ops ms':>9} {'predicted':>9} {'error':>6}"
        lines.append(hdr)
        by_touch = {t: {r["allocator"]: r for r in e["replay"][t]["rows"]} for t in touches}
        for name in by_touch[touches[0]]:
            r0 = by_touch[touches[0]][name]
            ci = f"[{r0['insitu_ci_ms'][0]:.1f}, {r0['insitu_ci_ms'][1]:.1f}]"
            saved = fmt(r0.get("saved_ms"))
            if r0.get("saved_ms") is not None and not r0["outside_noise"]:
                saved += "~"
            line = f"  {name:<30} {r0['insitu_ms']:>10.1f} {ci:>17} {saved:>7}"
            for t in touches:
                r = by_touch[t][name]
                err = (fmt(r["error"] * 100, "{:+.0f}%") if r.get("outside_noise") and
                       r.get("error") is not None else "-")
                line += (f" | {r['replay_ns_per_op']:>18.1f} {r['replay_ms']:>9.1f} "
                         f"{fmt(r.get('predicted_saved_ms')):>9} {err:>6}")
            lines.append(line)
    lines.append("")
    lines.append("saved: in-situ time saved against glibc, median over rounds of glibc's run "
                 "minus this one's (ms; ~ = inside noise, its 95% interval includes 0); "
                 "predicted: (glibc's ns/op - this one's) x ops; error: "
                 "(predicted - saved) / saved, where saved is outside noise; rank correlation n/a: "
                 "one ordering is all ties. replay's pick: the replay's fastest, its in-situ "
                 "time over the in-situ fastest's (both paired by round: the median ratio), "
                 "[its 95% interval], ~ = tied in situ; the replayer recommends: its verdict's "
                 "pick (of the pass it ranks by), the same measure.")
    for t in doc.get("models") or doc["touch"]:
        s = doc["summary"][t]
        lines.append(
            f"{t}: rank correlation >= 0.9 on {s['rho_at_least_0_9']} of {s['rho_defined']} "
            f"(mean {fmt(s['mean_rho'], '{:.2f}', 'n/a')}); predicted saving within +-25% on "
            f"{s['pairs_within_25pct']} of {s['pairs_outside_noise']} pairs outside noise "
            f"(median |error| {fmt(None if s['median_abs_error'] is None else s['median_abs_error'] * 100, '{:.0f}%')}"
            + (f"; predicted over saved: median {s['median_predicted_over_saved']:.2f}, "
               f"below 1 on {s['pairs_under']}, above on {s['pairs_over']}, 0 or below on "
               f"{s['pairs_opposite']}" if s.get("median_predicted_over_saved") is not None
               else "")
            + ")"
            + (f"; replay's pick within 5% of the in-situ best on {s['picks_within_5pct']} of "
               f"{s['picks']}, beyond 15% on {s['picks_beyond_15pct']} (the best or tied with "
               f"it on {s['picks_best_or_tied']}; worst {fmt(s['worst_pick_ratio'], '{:.2f}x')})"
               if s.get("picks") else "")
            + (f"; the replayer's recommendation within 5% on {s['recommended_within_5pct']} of "
               f"{s['recommended']}, beyond 15% on {s['recommended_beyond_15pct']} (worst "
               f"{fmt(s['worst_recommended_ratio'], '{:.2f}x')})"
               if s.get("recommended") else ""))
        if s.get("halves"):
            lines.append(format_halves(t, s["halves"]))
        if s.get("agreeing"):
            lines.append(format_agreeing(t, s["agreeing"]))
    return "\n".join(lines) + "\n"


def format_halves(model, h):
    """The summary's line on the program against itself (analysis.halves)."""
    def scores(x):
        err = x["median_abs_error"]
        return (f"mean rank correlation {fmt(x['mean_rho'], '{:.2f}', 'n/a')}, pick within 5% "
                f"on {x['within_5pct']:.1f} of {x['picked']}, median saving |error| "
                f"{fmt(None if err is None else err * 100, '{:.0f}%')} "
                f"({x['pairs_outside_noise']} pairs)")
    return (f"{model}, half the rounds against the other half ({h['splits']} random splits, "
            f"{h['workloads']} workloads): the program against itself: "
            f"{scores(h['program'])}; the replay against the same halves: "
            f"{scores(h['replay'])}")


def format_agreeing(model, a):
    """The summary's line on the replay where the program's halves agree
    with each other as the targets ask (analysis._agreeing)."""
    err = a["median_abs_error"]
    rec = (f"; the replayer's recommendation within 5% on {a['recommended_within_5pct']} of "
           f"{a['recommended']}, beyond 15% on {a['recommended_beyond_15pct']}"
           if a["recommended"] else "")
    return (f"{model}, where the program agrees with itself (of {a['workloads']} workloads, "
            f"its halves' rank correlation at least {analysis.RHO_TARGET} on "
            f"{a['rho_workloads']}, their pick within 5% in every split on {a['picks']}, their "
            f"median saving |error| within 25% on {a['saving_workloads']}): the replay's mean "
            f"rank correlation {fmt(a['mean_rho'], '{:.2f}', 'n/a')}; its pick within 5% on "
            f"{a['picks_within_5pct']} of {a['picks']}, beyond 15% on "
            f"{a['picks_beyond_15pct']}{rec}; median saving |error| "
            f"{fmt(None if err is None else err * 100, '{:.0f}%')} "
            f"({a['pairs_outside_noise']} pairs)")


def parse_args(argv):
    program = []
    if "--" in argv:
        i = argv.index("--")
        argv, program = argv[:i], argv[i + 1:]
    ap = argparse.ArgumentParser(prog="check", description=__doc__.split("\n\n")[0])
    ap.add_argument("--workloads", default=",".join(DEFAULT_WORKLOADS),
                    help="comma-separated built-in workloads, 'all', or 'mt' (the "
                         "multi-threaded ones)")
    ap.add_argument("--allocators", default=None,
                    help="comma-separated: glibc, tcmalloc, jemalloc, mimalloc and catalog "
                         "policies (default: " + ",".join(DEFAULT_ALLOCATORS) + "; for "
                         "multi-threaded workloads " + ",".join(DEFAULT_MT_ALLOCATORS) +
                         " (given, the policies that are not thread-safe are skipped for "
                         "them); the mallocs with --program)")
    ap.add_argument("--runs", type=int, default=5, help="in-situ runs and replay repeats")
    ap.add_argument("--touch", default="first,auto",
                    help="replay --touch modes to compare, comma-separated (auto: the "
                    "replayer's default)")
    ap.add_argument("--phase", default="cold,warm",
                    help="which of the replay's passes predict the program, comma-separated: "
                         "cold (the first pass, as a program run once pays it) and/or warm")
    ap.add_argument("--param", action="append", default=[],
                    help="WORKLOAD:name=value, a workload parameter (repeatable)")
    ap.add_argument("--threads", default="auto,each,one",
                    help="replay modes of a multi-threaded trace, comma-separated: auto (the "
                         "replayer's default), each (per thread) and/or one (one thread, the "
                         "recorded order)")
    ap.add_argument("--clock", choices=["auto", "cpu", "wall"], default="auto",
                    help="in-situ time: the run's CPU time (leaves out waiting for a core on a "
                         "shared machine), its wall time, or auto (default): wall for "
                         "multi-threaded workloads and programs, cpu otherwise")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--format", choices=["table", "json"], default="table")
    ap.add_argument("--out", default="", help="write the report here (relative to where "
                                              "`bazel run` was typed)")
    ap.add_argument("--program", action="store_true",
                    help="check the program after --, not the built-in workloads")
    ap.add_argument("--workdir", default="", help="keep traces here (default: a temporary "
                                                  "directory, removed)")
    ap.add_argument("--render", default="",
                    help="print a saved --format=json report as a table (or JSON), run nothing; "
                    "several (comma-separated) are merged into one, summarized over all")
    ap.add_argument("--study", default="", metavar="MODEL",
                    help="with --render: a line per program, the replay's pick in MODEL (as "
                    "auto/cold) against the program's best")
    args = ap.parse_args(argv)
    args.program_argv = program
    if args.render:
        return args
    if args.program and not program:
        ap.error("--program needs a command after --")
    if program and not args.program:
        ap.error("arguments after -- need --program")
    if not 2 <= args.runs <= 100:
        ap.error(f"--runs={args.runs}: must be 2 to 100")
    args.touch = [t for t in args.touch.split(",") if t]
    for t in args.touch:
        if t not in TOUCH_MODES:
            ap.error(f"--touch={t}: must be one of {', '.join(TOUCH_MODES)}")
    if not args.touch:
        ap.error("--touch: give at least one mode")
    args.phase = [p for p in args.phase.split(",") if p]
    for p in args.phase:
        if p not in analysis.PHASES:
            ap.error(f"--phase={p}: must be one of {', '.join(analysis.PHASES)}")
    if not args.phase:
        ap.error("--phase: give at least one of cold, warm")
    args.threads = [t for t in args.threads.split(",") if t]
    for t in args.threads:
        if t not in THREAD_MODES:
            ap.error(f"--threads={t}: must be one of {', '.join(THREAD_MODES)}")
    if not args.threads:
        ap.error("--threads: give at least one of " + ", ".join(THREAD_MODES))
    if "walk" in args.touch and args.threads == ["each"]:
        ap.error("--touch=walk --threads=each: a walk replays on one thread (add auto or one)")
    # auto first: the mode it resolves to reuses its replay (finish).
    args.threads = sorted(dict.fromkeys(args.threads), key=THREAD_MODES.index)
    given = args.allocators is not None
    if args.allocators is None:
        args.allocators = ",".join(MALLOCS if args.program else DEFAULT_ALLOCATORS)
    args.allocators = [a for a in args.allocators.split(",") if a]
    args.mt_default_allocators = args.allocators if given else DEFAULT_MT_ALLOCATORS
    if analysis.BASELINE not in args.allocators:
        ap.error("--allocators must include glibc, the baseline of every saving")
    if args.program and any(a not in MALLOCS for a in args.allocators):
        ap.error("with --program only the mallocs can be compared: " + ", ".join(MALLOCS))
    known = run([INSITU, "--list"]).stdout.split("\n")
    args.mt_workloads = [l.split()[1] for l in known if l.startswith("mt_workload ")]
    args.mt_allocators = [l.split()[1] for l in known if l.startswith("mt_allocator ")]
    all_workloads = [l.split()[1] for l in known if l.startswith("workload ")] + args.mt_workloads
    # The switch's names (std is glibc's here: the mallocs run under std).
    known_allocators = MALLOCS + [l.split()[1] for l in known
                                  if l.startswith("allocator ") and l.split()[1] != "std"]
    for a in args.allocators:
        if a not in known_allocators:
            ap.error(f"--allocators: unknown allocator {a}; one of the mallocs "
                     f"({', '.join(MALLOCS)}) or a catalog policy (`insitu --list`; "
                     "boost_fast_pool and the replayer's other baselines cannot run in situ)")
    args.workloads = (all_workloads if args.workloads == "all" else
                      args.mt_workloads if args.workloads == "mt" else
                      [w for w in args.workloads.split(",") if w])
    for w in args.workloads:
        if w not in all_workloads:
            ap.error(f"--workloads: unknown workload {w}; one of {', '.join(all_workloads)}")
    args.params = {}
    for p in args.param:
        w, sep, nv = p.partition(":")
        pieces = [x for x in nv.split(",") if x]
        if not sep or not pieces or any("=" not in x for x in pieces) or w not in all_workloads:
            ap.error(f"--param={p}: expected WORKLOAD:name=value[,name=value] with a known "
                     "workload")
        args.params.setdefault(w, []).extend(pieces)
    return args


def merged_params(workload, overrides):
    given = {o.split("=", 1)[0] for o in overrides}
    return [p for p in DEFAULT_PARAMS.get(workload, []) if p.split("=", 1)[0] not in given] + \
        overrides


def machine():
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} CPUs, Linux {platform.release()}, load {os.getloadavg()[0]:.1f}"


def halves_of(e, model):
    """analysis.halves() of one entry in one model, from the report alone
    (the in-situ seconds by round, the replay's ns/op and its rounds); None
    where the report lacks them (one written before they were kept)."""
    rep = e["replay"][model]
    insitu = {a: v["seconds"] for a, v in (e.get("insitu") or {}).items() if v.get("seconds")}
    replay = {r["allocator"]: (r["replay_ns_per_op"],) + tuple(r.get("replay_interval_ns") or
                                                                (None, None))
              for r in rep["rows"]}
    if not insitu or not e.get("ops"):
        return None
    return analysis.halves(insitu, replay, e["ops"], rep.get("replay_rounds"),
                           rep.get("replay_margin", 0.0))


def summary_of(entries, used):
    """Each model over the entries replayed in it (a one-thread entry has
    no "/each" or "/one" models). Each entry's model keeps its halves too."""
    for e in entries:
        for m in used:
            if m in e["replay"]:
                e["replay"][m]["halves"] = halves_of(e, m)
    return {m: analysis.summarize([(e["replay"][m]["rows"], e["replay"][m]["rho"])
                                   for e in entries if m in e["replay"]],
                                  [e["replay"][m].get("pick") for e in entries
                                   if m in e["replay"]],
                                  [e["replay"][m].get("recommended") for e in entries
                                   if m in e["replay"]],
                                  [e["replay"][m]["halves"] for e in entries
                                   if m in e["replay"]])
            for m in used}


def merge(docs, summarize=True):
    """One report of several (the study: each workload set and program
    checked on its own): the entries in order, each model's summary over
    all of them (unless not `summarize`: the study's table needs none)."""
    models_ = []
    for d in docs:
        models_ += [m for m in (d.get("models") or d["touch"]) if m not in models_]
    entries = [e for d in docs for e in d["entries"]]
    merged = dict(docs[0], entries=entries, models=models_,
                  date=" to ".join(sorted({docs[0]["date"], docs[-1]["date"]})),
                  skipped={k: v for d in docs for k, v in d.get("skipped", {}).items()})
    merged["summary"] = summary_of(entries, models_) if summarize else {}
    return merged


def display_name(e):
    """A program by its file name ("python3.11 churn.py"), a workload by its own."""
    if e["kind"] != "program":
        return e["name"]
    return e["name"].replace(os.path.dirname(e["name"].split()[0]) + "/", "", 1)


def format_study(doc, model):
    """One line per entry in `model`: the replay's fastest and the
    replayer's recommendation against the program's best, and the rank
    correlation (the study's table)."""
    def ratio_of(p):
        if not p:
            return "-"
        ratio = f"{p['ratio']:.2f}x"
        if p.get("paired") and p["pick"] != p["best"] and p["paired"][2] != float("inf"):
            ratio += f" [{p['paired'][1]:.2f}, {p['paired'][2]:.2f}]"
        if p["tied"] and p["pick"] != p["best"]:
            ratio += " ~"
        return ratio

    lines = [f"the study, {model}: each program's best in situ, the replay's fastest and "
             "the replayer's recommendation",
             f"  {'program':<44} {'threads':>7} {'best in situ':<16} {'replay fastest':<16} "
             f"{'fastest/best [95%]':<22} {'recommended':<16} {'recommended/best':<22} "
             f"{'rho':>5}"]
    for e in doc["entries"]:
        rep = e["replay"].get(model)
        if rep is None:
            continue
        p = rep.get("pick") or {}
        r = rep.get("recommended") or {}
        name = display_name(e)
        lines.append(f"  {name[:44]:<44} {e.get('threads', 1):>7} {p.get('best', '-'):<16} "
                     f"{p.get('pick', '-'):<16} {ratio_of(p):<22} {r.get('pick', '-'):<16} "
                     f"{ratio_of(r):<22} {fmt(rep['rho'], '{:.2f}', 'n/a'):>5}")
    return "\n".join(lines) + "\n"


def emit(doc, args):
    text = json.dumps(doc, indent=1) + "\n" if args.format == "json" else format_table(doc)
    if args.out:
        out = args.out
        if not os.path.isabs(out):
            out = os.path.join(os.environ.get("BUILD_WORKING_DIRECTORY", ""), out)
        with open(out, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


def main(argv):
    args = parse_args(argv)
    if args.render:
        path = args.render
        try:
            docs = []
            for path in args.render.split(","):
                if not os.path.isabs(path):
                    path = os.path.join(os.environ.get("BUILD_WORKING_DIRECTORY", ""), path)
                with open(path) as f:
                    docs.append(json.load(f))
            # The summary is computed anew: a report saved before a figure
            # was summarized gets it.
            study_table = args.study and args.format == "table"
            doc = merge(docs, summarize=not study_table)
            if study_table:
                sys.stdout.write(format_study(doc, args.study))
            else:
                emit(doc, args)
        except (OSError, ValueError, KeyError, TypeError) as e:
            sys.stderr.write(f"check: --render: {path}: not a fidelity report: {e!r}\n")
            return 1
        return 0
    allocators, skipped = available(args.allocators)
    entries = []
    with tempfile.TemporaryDirectory(prefix="fidelity.") as tmp:
        workdir = tmp
        if args.workdir:
            workdir = args.workdir
            if not os.path.isabs(workdir):
                workdir = os.path.join(os.environ.get("BUILD_WORKING_DIRECTORY", ""), workdir)
            os.makedirs(workdir, exist_ok=True)
        try:
            if args.program:
                entries.append(check_program(args.program_argv, allocators, args, workdir))
            else:
                mt_allocators, mt_skipped = available(args.mt_default_allocators)
                skipped.update(mt_skipped)
                for w in args.workloads:
                    mt = w in args.mt_workloads
                    entries.append(check_workload(w, merged_params(w, args.params.get(w, [])),
                                                  mt_allocators if mt else allocators, args,
                                                  workdir, multi_threaded=mt))
        except CheckError as e:
            progress("")
            sys.stderr.write(f"check: {e}\n")
            return 1
    progress("")
    # The models some entry was replayed in (no "/each" or "/one" ones without a
    # multi-threaded entry).
    used = [m for m in models(args) if any(m in e["replay"] for e in entries)]
    doc = {
        "machine": machine(),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "runs": args.runs,
        "clock": args.clock,
        "touch": args.touch,
        "phases": args.phase,
        "threads": args.threads,
        "models": used,
        "skipped": skipped,
        "entries": entries,
        "summary": summary_of(entries, used),
    }
    emit(doc, args)
    for a, why in skipped.items():
        sys.stderr.write(f"check: skipped {a}: {why}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

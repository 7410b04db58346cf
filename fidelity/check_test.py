"""End to end: //fidelity:check on a tiny configuration (small workloads, three
allocators, two runs), through the real insitu, record, capture and replayer
binaries. Checks the report's structure and the errors for bad flags; never
timings (those belong to the check itself, not to a test)."""

import json
import os
import subprocess
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHECK = os.path.join(ROOT, "fidelity", "check")
MT_PROGRAM = os.path.join(ROOT, "examples", "mt_program", "mt_program")
TINY = ["--runs=2", "--allocators=glibc,slab/st/stack,slab/st/single",
        "--workloads=simple_map,list_churn", "--param=simple_map:entries=2000",
        "--param=list_churn:initial=200,operations=2000", "--touch=first,program",
        "--phase=cold,warm"]
MODELS = ["first/cold", "first/warm", "program/cold", "program/warm"]


def check(*args):
    return subprocess.run([CHECK, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, check=False)


class CheckTest(unittest.TestCase):
    def test_json_report_of_workloads(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "f.json")
            p = check(*TINY, "--format=json", f"--out={out}")
            self.assertEqual(p.returncode, 0, p.stderr)
            with open(out) as f:
                doc = json.load(f)
            table = check(f"--render={out}")
        self.assertEqual(table.returncode, 0, table.stderr)
        self.assertIn("simple_map (entries=2000)", table.stdout)
        self.assertIn("| program/cold ns/op", table.stdout)
        self.assertIn("replay's pick, in situ over the in-situ best: first/cold ", table.stdout)
        self.assertEqual(doc["runs"], 2)
        self.assertEqual(doc["touch"], ["first", "program"])
        self.assertEqual(doc["models"], MODELS)
        self.assertEqual([e["name"] for e in doc["entries"]], ["simple_map", "list_churn"])
        for e in doc["entries"]:
            self.assertEqual(e["kind"], "workload")
            self.assertGreater(e["ops"], 0)
            self.assertEqual(sorted(e["insitu"]), ["glibc", "slab/st/single", "slab/st/stack"])
            for a in e["insitu"].values():
                self.assertEqual(len(a["seconds"]), 2)
                lo, hi = a["ci95_ms"]
                self.assertLessEqual(lo, a["median_ms"])
                self.assertLessEqual(a["median_ms"], hi)
            self.assertEqual(sorted(e["replay"]), MODELS)
            for t in MODELS:
                rep = e["replay"][t]
                self.assertTrue(rep["rho"] is None or -1.0 <= rep["rho"] <= 1.0)
                rows = {r["allocator"]: r for r in rep["rows"]}
                self.assertEqual(sorted(rows), ["glibc", "slab/st/single", "slab/st/stack"])
                self.assertEqual(rows["slab/st/stack"]["policy"], "slab/st/stack")
                # The replay's pick and what it costs in situ (two rounds do
                # not pair: the best is the smallest median).
                pick = rep["pick"]
                self.assertIn(pick["pick"], rows)
                self.assertIn(pick["best"], rows)
                best_ms = min(r["insitu_ms"] for r in rows.values())
                self.assertAlmostEqual(rows[pick["best"]]["insitu_ms"], best_ms)
                self.assertAlmostEqual(pick["ratio"], rows[pick["pick"]]["insitu_ms"] / best_ms)
                self.assertGreaterEqual(pick["ratio"], 1.0)
                self.assertEqual(pick["within"], pick["ratio"] <= 1.05)
                self.assertEqual(rows["glibc"]["policy"], "malloc")
                for name, r in rows.items():
                    self.assertGreater(r["replay_ns_per_op"], 0)
                    self.assertAlmostEqual(r["replay_ms"], r["replay_ns_per_op"] * e["ops"] / 1e6)
                    if name == "glibc":
                        self.assertNotIn("saved_ms", r)
                    else:
                        for k in ("saved_ms", "predicted_saved_ms", "outside_noise", "error",
                                  "within_tolerance"):
                            self.assertIn(k, r)
        for t in MODELS:
            s = doc["summary"][t]
            self.assertEqual(s["workloads"], 2)
            self.assertLessEqual(s["pairs_within_25pct"], s["pairs_outside_noise"])
            self.assertEqual(s["picks"], 2)
            self.assertLessEqual(s["picks_within_5pct"], 2)
            # Two rounds do not halve: no line on the program against itself.
            self.assertNotIn("halves", s)
            self.assertGreaterEqual(doc["entries"][0]["replay"][t]["replay_margin"], 0)
        self.assertNotIn("half the rounds against the other half", table.stdout)
        self.assertNotIn("where the program agrees with itself", table.stdout)

        # The same report with six rounds in situ (the two runs repeated
        # with a drift): rendered, it scores the program against itself.
        for e in doc["entries"]:
            for a in e["insitu"].values():
                a["seconds"] = [x * f for f in (1.0, 1.01, 0.99) for x in a["seconds"]]
        with tempfile.TemporaryDirectory() as d:
            six = os.path.join(d, "six.json")
            with open(six, "w") as f:
                json.dump(doc, f)
            table = check(f"--render={six}")
            rendered = check(f"--render={six}", "--format=json")
        self.assertEqual(table.returncode, 0, table.stderr)
        self.assertIn("program/cold, half the rounds against the other half (8 random splits, "
                      "2 workloads): the program against itself: mean rank correlation",
                      table.stdout)
        self.assertIn("; the replay against the same halves: mean rank correlation", table.stdout)
        self.assertIn("program/cold, where the program agrees with itself (of 2 workloads, its "
                      "halves' rank correlation at least 0.8 on ", table.stdout)
        agreeing = json.loads(rendered.stdout)["summary"]["program/cold"]["agreeing"]
        self.assertEqual(agreeing["workloads"], 2)
        self.assertLessEqual(agreeing["picks_within_5pct"], agreeing["picks"])
        self.assertLessEqual(agreeing["picks"], 2)
        halves = json.loads(rendered.stdout)["summary"]["program/cold"]["halves"]
        self.assertEqual((halves["workloads"], halves["splits"]), (2, 8))
        for side in ("program", "replay"):
            self.assertEqual(halves[side]["picked"], 2)
            self.assertLessEqual(halves[side]["within_5pct"], 2)

    def test_table_and_program(self):
        with tempfile.TemporaryDirectory() as d:
            data = os.path.join(d, "lines.txt")
            with open(data, "w") as f:
                f.write("".join(f"{(i * 7919) % 1000}\n" for i in range(2000)))
            p = check("--program", "--runs=2", "--allocators=glibc", "--touch=first", "--phase=cold",
                      "--", "/usr/bin/sort", data)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("\nsort " + data + ": ", p.stdout)  # named by its file name
        self.assertIn("cannot tell containers apart", p.stdout)  # one arena
        self.assertRegex(p.stdout, r"glibc +[0-9.]+ +\[")
        self.assertIn("first/cold: rank correlation >= 0.9 on", p.stdout)
        # A capture runs no pool in situ: the verdict's malloc is measured.
        self.assertIn("the replayer recommends, in situ over the in-situ best: "
                      "first/cold glibc (the best)", p.stdout)

    def test_multi_threaded_workload_per_thread_and_one_thread(self):
        """A multi-threaded workload runs under the thread-safe policies only
        and is replayed per thread and on one thread, each a model; a
        one-thread workload beside it has the per-thread models only."""
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "f.json")
            p = check("--runs=2", "--allocators=glibc,slab/st/stack,slab/mt/single",
                      "--workloads=producer_consumer,simple_map",
                      "--param=producer_consumer:messages=300", "--param=simple_map:entries=2000",
                      "--touch=first", "--phase=cold", "--threads=auto,one", "--format=json",
                      f"--out={out}")
            self.assertEqual(p.returncode, 0, p.stderr)
            with open(out) as f:
                doc = json.load(f)
            table = check(f"--render={out}")
        self.assertEqual(table.returncode, 0, table.stderr)
        self.assertIn("producer_consumer (messages=300): ", table.stdout)
        self.assertIn("threads; in situ wall time", table.stdout)
        self.assertIn("skipped: slab/st/stack (not thread-safe)", table.stdout)
        self.assertIn("| first/cold/one ns/op", table.stdout)
        self.assertEqual(doc["models"], ["first/cold", "first/cold/one"])
        mt, st = doc["entries"]
        self.assertTrue(mt["multi_threaded"])
        self.assertGreater(mt["threads"], 1)
        self.assertEqual(mt["clock"], "wall")
        self.assertEqual(sorted(mt["insitu"]), ["glibc", "slab/mt/single"])
        self.assertEqual(sorted(mt["replay"]), ["first/cold", "first/cold/one"])
        # Per thread: wall time while the replay threads fit in the usable
        # cores, CPU time (without waits) when they outnumber them.
        fits = mt["threads"] <= len(os.sched_getaffinity(0))
        self.assertEqual(mt["replay"]["first/cold"]["clock"], "wall" if fits else "cpu")
        self.assertEqual(mt["replay"]["first/cold/one"]["clock"], "cpu")
        speed = mt["replay_speed"]
        self.assertEqual(sorted(speed), ["first/auto", "first/one"])
        self.assertGreater(speed["first/auto"]["replay_threads"], 1)
        self.assertEqual(speed["first/one"]["replay_threads"], 1)
        self.assertGreater(speed["first/one"]["cold_ops_per_s"], 0)
        for m in ("first/cold", "first/cold/one"):
            self.assertIn(mt["replay"][m]["pick"]["pick"], ["glibc", "slab/mt/single"])
            # The other clock's figures, for reading.
            self.assertEqual(mt["replay"][m]["other_clock"]["clock"], "cpu")
            self.assertIn(mt["replay"][m]["other_clock"]["pick"]["best"],
                          ["glibc", "slab/mt/single"])
        self.assertEqual(sorted(mt["insitu_cpu"]), ["glibc", "slab/mt/single"])
        self.assertIn("against in-situ cpu time: first/cold rho ", table.stdout)
        self.assertFalse(st["multi_threaded"])
        self.assertEqual(st["threads"], 1)
        self.assertEqual(st["clock"], "cpu")
        self.assertEqual(sorted(st["insitu"]), ["glibc", "slab/mt/single", "slab/st/stack"])
        self.assertEqual(sorted(st["replay"]), ["first/cold"])
        self.assertEqual(doc["summary"]["first/cold"]["workloads"], 2)
        self.assertEqual(doc["summary"]["first/cold/one"]["workloads"], 1)

    def test_multi_threaded_program(self):
        p = check("--program", "--runs=2", "--allocators=glibc", "--touch=first", "--phase=cold",
                  "--format=json", "--", MT_PROGRAM, "2", "2", "300")
        self.assertEqual(p.returncode, 0, p.stderr)
        e = json.loads(p.stdout)["entries"][0]
        self.assertEqual(e["kind"], "program")
        self.assertGreater(e["threads"], 1)
        self.assertEqual(e["clock"], "wall")
        self.assertEqual(sorted(e["replay"]), ["first/cold", "first/cold/each", "first/cold/one"])
        # A capture has no container arenas: the replayer's default replays
        # it on one thread, and that replay is the "one" model's too.
        speed = e["replay_speed"]
        self.assertEqual(speed["first/auto"]["replay_threads"], 1)
        self.assertGreater(speed["first/each"]["replay_threads"], 1)
        self.assertEqual(e["replay"]["first/cold"]["rows"], e["replay"]["first/cold/one"]["rows"])
        self.assertNotEqual(e["replay"]["first/cold"]["rows"],
                            e["replay"]["first/cold/each"]["rows"])

    def test_several_reports_render_as_one_study(self):
        """--render of two reports merges them: one summary over both, and
        --study gives a line per program with its pick against its best."""
        with tempfile.TemporaryDirectory() as d:
            a, b = os.path.join(d, "a.json"), os.path.join(d, "b.json")
            p = check("--runs=2", "--allocators=glibc,slab/st/stack", "--workloads=simple_map",
                      "--param=simple_map:entries=2000", "--touch=program", "--phase=cold",
                      "--format=json", f"--out={a}")
            self.assertEqual(p.returncode, 0, p.stderr)
            p = check("--runs=2", "--allocators=glibc,slab/st/stack", "--workloads=list_churn",
                      "--param=list_churn:initial=200,operations=2000", "--touch=program",
                      "--phase=cold", "--format=json", f"--out={b}")
            self.assertEqual(p.returncode, 0, p.stderr)
            merged = check(f"--render={a},{b}", "--format=json")
            study = check(f"--render={a},{b}", "--study=program/cold")
        self.assertEqual(merged.returncode, 0, merged.stderr)
        doc = json.loads(merged.stdout)
        self.assertEqual([e["name"] for e in doc["entries"]], ["simple_map", "list_churn"])
        self.assertEqual(doc["summary"]["program/cold"]["workloads"], 2)
        self.assertEqual(doc["summary"]["program/cold"]["picks"], 2)
        # The replayer's verdict, measured in situ as the replay's fastest is.
        self.assertEqual(doc["summary"]["program/cold"]["recommended"], 2)
        for e in doc["entries"]:
            model = e["replay"]["program/cold"]
            self.assertIn(model["recommended"]["pick"], ["glibc", "slab/st/stack"])
            self.assertIn(model["recommended"]["pick"],
                          model["equally_fast"] + [model["memory_passed_over"]])
            self.assertEqual(sorted(model["replay_rounds"]), ["glibc", "slab/st/stack"])
            self.assertEqual(len(model["replay_rounds"]["glibc"]), 2)
        self.assertEqual(study.returncode, 0, study.stderr)
        lines = study.stdout.splitlines()
        self.assertIn("the study, program/cold", lines[0])
        self.assertRegex(study.stdout,
                         r"\n  simple_map +1 [a-z/]+ +[a-z/]+ +[0-9.]+x.* [a-z/]+ +[0-9.]+x")
        self.assertRegex(study.stdout, r"\n  list_churn +1 ")

    def test_bad_flags_are_named(self):
        for args, what in [
            (["--workloads=nope"], "unknown workload nope"),
            (["--touch=sideways"], "--touch=sideways"),
            (["--phase=tepid"], "--phase=tepid"),
            (["--allocators=slab/st/stack"], "must include glibc"),
            (["--allocators=glibc,boost_fast_pool"], "cannot run in situ"),
            (["--param=simple_map"], "expected WORKLOAD:name=value"),
            (["--runs=1"], "--runs=1"),
            (["--threads=many"], "--threads=many"),
            (["--program"], "needs a command"),
            (["--render=/nonexistent.json"], None),
        ]:
            p = check(*args)
            if what is None:  # an unreadable report: a run-time failure
                self.assertEqual(p.returncode, 1, args)
                self.assertIn("not a fidelity report", p.stderr)
                continue
            self.assertEqual(p.returncode, 2, args)
            self.assertIn(what, p.stderr, args)

    def test_bad_workload_parameter_fails_with_the_tools_message(self):
        p = check("--runs=2", "--allocators=glibc", "--workloads=simple_map", "--touch=first",
                  "--param=simple_map:entries=0")
        self.assertEqual(p.returncode, 1)
        self.assertIn("entries", p.stderr)


if __name__ == "__main__":
    unittest.main()

#!/usr/bin/env python3
"""tuned against onnxruntime and oneDNN on single DL ops (shapes.py), one trial budget per op.

    sweep.py [--trials N] [--repeat R] [--build DIR] [--venv DIR] [--work DIR [--retime]] [SHAPE ...]

For each shape (all by default): the one-node model is written, tuned into a fresh log
(`tuned tune --model`), then compare_onnxruntime.py compiles it, times it through `tuned
run-model`, checks its output against onnxruntime's and times onnxruntime (each R samples of
>= 20 ms); tuned_onednn_op times the op in oneDNN (15 samples of >= 20 ms). Every runtime runs
in its own process. An op whose tensors exceed the last-level cache runs cold in all three (--flush-cache:
one run per sample, each after an untimed read through 4x the cache, at least 256 MiB), as the
worker measures it while tuning. Prints the table (ratio = the faster library's time / tuned's
kernel time, > 1: tuned is faster) with the geometric mean of the ratios, and writes it as JSON into the work folder.
tuned_machine_peak measures the machine's fp32 FMA peak and memory bandwidth before the first
and after the last op; each op's "roofline" share is its time at the better of the two figures
(FLOPs at the peak, or its minimum bytes at the read or triad bandwidth, whichever takes longer) over
tuned's time. With --retime, the ops' logs already in --work (an earlier sweep's folder) are
compiled and timed again with the libraries, without tuning: one run's figures checked by another.
"""
import argparse
import json
import math
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
COMPARE = os.path.join(ROOT, "tests", "models", "compare_onnxruntime.py")
sys.path.insert(0, os.path.dirname(COMPARE))
from compare_onnxruntime import ensure_onnxruntime, last_level_cache_bytes  # noqa: E402

MIN_SAMPLE_SECONDS = 0.02  # per timing sample of every runtime: long enough for small ops, the same for all
PAIRS, PAIR_RUNS = 7, 10  # a cold op's paired roofline: probe, kernel runs, probe (paired_roofline)


def run_json(command):
    """The command's JSON on stdout (None if it printed none), its exit status and stderr's tail."""
    result = subprocess.run([str(c) for c in command], capture_output=True, text=True)
    try:
        out = json.loads(result.stdout)
    except json.JSONDecodeError:
        out = None
    return out, result.returncode, result.stderr.strip()[-800:]


def sweep_shape(shape, a, tuned, onednn):
    import onnx
    work = os.path.join(a.work, shape.name)
    os.makedirs(work, exist_ok=True)
    model, db = os.path.join(work, shape.name + ".onnx"), os.path.join(work, "tuned.db")
    if not (a.retime and os.path.exists(model)):
        onnx.save(shape.model(), model)
    row = {"shape": shape.name, "gflop": 2 * shape.macs() * 1e-9, "mbytes": shape.bytes() * 1e-6, "db": db,
           "bandwidth": shape.bandwidth() if hasattr(shape, "bandwidth") else "read"}
    # An op whose tensors exceed the last-level cache is timed cold in every runtime, as tuned's
    # worker measures it (protocol 2): repeated warm runs keep a part of it cached that varies.
    llc = last_level_cache_bytes()
    row["cold"] = bool(llc) and shape.bytes() > llc
    cold = ["--flush-cache"] if row["cold"] else []

    if a.retime and os.path.exists(db):
        # The op's log from an earlier sweep: its kernels and the libraries timed again, untouched.
        row["trials_to_95"], row["trials"] = trials_to_95(db)
        row["tune_wall_seconds"], row["seconds_per_trial"] = 0.0, 0.0
    else:
        start = time.monotonic()
        tune, rc, err = run_json([tuned, "tune", "--model", model, "--db", db, "--trials", a.trials, "--json"])
        row["tune_wall_seconds"] = time.monotonic() - start
        if rc != 0 or tune is None:
            row["error"] = f"tune failed ({rc}): {err}"
            return row
        row["trials"] = tune["trials"]
        row["trials_to_95"], _ = trials_to_95(db)
        row["seconds_per_trial"] = row["tune_wall_seconds"] / max(tune["trials"], 1)
        # Where the rounds' time went (builds overlap the runs and each other: may pass 100%).
        spent = tune.get("time") or {}
        if spent.get("wall_seconds", 0) > 0:
            for part in ("search", "build", "run"):
                row[f"{part}_share"] = spent[f"{part}_seconds"] / spent["wall_seconds"]

    # Every runtime is timed in each of a.rounds rounds, one after the other, and each keeps the
    # fastest of its round medians: a shared host has slower episodes of seconds (a neighbour on
    # the core), and one round's median can fall inside one for any runtime. A cold op's
    # roofline uses the memory bandwidth measured around the round of tuned's fastest median
    # (the better of before and after it): this host's memory changes speed for minutes at a
    # time, so the bandwidth of the sweep's start says little about a later round.
    for _ in range(a.rounds):
        around = [measure_peak(a.machine_peak, "--memory-only", "--seconds", "0.2")] if row["cold"] else []
        compare, rc, err = run_json([sys.executable, COMPARE, "--tuned", tuned, "--model", model, "--db", db,
                                     "--work", os.path.join(work, "run"), "--venv", a.venv, "--repeat", a.repeat,
                                     "--min-sample-seconds", MIN_SAMPLE_SECONDS, *cold])
        if compare is None:
            row["error"] = f"compare_onnxruntime.py failed ({rc}): {err}"
            return row
        tuned_improved = compare["tuned_kernel_median_seconds"] < row.get("tuned_kernel_seconds", math.inf)
        if tuned_improved:
            row.update(tuned_kernel_seconds=compare["tuned_kernel_median_seconds"],
                       tuned_run_seconds=compare["tuned_median_seconds"])
        row["onnxruntime_seconds"] = min(compare["onnxruntime_median_seconds"], row.get("onnxruntime_seconds", math.inf))
        round_best = compare["onnxruntime_median_seconds"]
        row.update(onnxruntime=compare["onnxruntime"], max_relative_error=compare["max_relative_error"],
                   check_ok=rc == 0 and row.get("check_ok", True),
                   tasks_from_log=f"{compare['tasks_from_log']}/{compare['tasks']}")
        if onednn:
            # A convolution runs both on NCHW and on oneDNN's own layouts (reorders timed): the faster counts.
            variants = [[]] + ([["--native-layouts"]] if shape.onednn_args()[0] == "conv" else [])
            for flags in variants:
                out, rc, err = run_json([onednn, *shape.onednn_args(), "--min-sample-ms", MIN_SAMPLE_SECONDS * 1e3,
                                         *flags, *cold])
                if out is None or rc != 0:
                    row["onednn_error"] = f"({rc}): {err}"
                    continue
                round_best = min(round_best, out["median_seconds"])
                if out["median_seconds"] < row.get("onednn_seconds", math.inf):
                    layouts = "native layouts + reorders" if out["native_layouts"] else "plain layouts"
                    row.update(onednn_seconds=out["median_seconds"],
                               onednn_implementation=f"{out['implementation']} ({layouts})")
        row.setdefault("round_ratios", []).append(round_best / compare["tuned_kernel_median_seconds"])
        if around:
            around.append(measure_peak(a.machine_peak, "--memory-only", "--seconds", "0.2"))
            row.setdefault("round_read_gbs", []).append(max(p["read_gbs"] for p in around))
            if tuned_improved:
                row.update(read_gbs=max(p["read_gbs"] for p in around), triad_gbs=max(p["triad_gbs"] for p in around))
    if row["cold"]:
        paired_roofline(row, shape, a, tuned, model, os.path.join(work, "run", shape.name + ".so"))
    # The ratio pairs the runtimes within a round (timed seconds apart, so a slower episode of the
    # host falls on all of them) and takes the median over the rounds; the fastest times of
    # different rounds may come from different episodes (kept as best_of_rounds_ratio).
    best = min(t for t in (row["onnxruntime_seconds"], row.get("onednn_seconds")) if t)
    row["best_of_rounds_ratio"] = best / row["tuned_kernel_seconds"]
    row["ratio"] = statistics.median(row["round_ratios"])
    return row


def paired_roofline(row, shape, a, tuned, model, library):
    """A cold op's share of the memory bandwidth with both measured within a second: PAIRS times
    the bandwidth probe, tuned's kernel (run-model, PAIR_RUNS cold runs) and the probe again;
    each pair's share is the op's bytes at the mean of its two probes over the kernel's median,
    and the op's is the median over the pairs. This host's memory changes speed from second to
    second (33-57 GB/s read within one sweep), so a probe a round apart says little of the
    speed the kernel ran at."""
    key = "triad_gbs" if row["bandwidth"] == "triad" else "read_gbs"
    pairs = []
    for _ in range(PAIRS):
        before = measure_peak(a.machine_peak, "--memory-only", "--seconds", "0.1")
        out, rc, err = run_json([tuned, "run-model", "--model", model, "--library", library,
                                 "--repeat", PAIR_RUNS, "--flush-cache", "--json"])
        if out is None or rc != 0:
            row["paired_roofline_error"] = f"run-model failed ({rc}): {err}"
            return
        after = measure_peak(a.machine_peak, "--memory-only", "--seconds", "0.1")
        gbs = (before[key] + after[key]) / 2
        pairs.append({"gbs": gbs, "kernel_seconds": out["kernel_median_seconds"],
                      "share": shape.bytes() * 1e-9 / gbs / out["kernel_median_seconds"]})
    row["paired_roofline"] = pairs
    row["paired_roofline_share"] = statistics.median(p["share"] for p in pairs)


def trials_to_95(db):
    """The search trials (records of kind SEARCH, in the order they were stored) it took until the
    running best reached 95% of the throughput of the search's final best; and that count."""
    with sqlite3.connect(db) as conn:
        times = [t for (t,) in conn.execute("SELECT median_seconds FROM records WHERE kind = 0 ORDER BY id")]
    measured = [t for t in times if t is not None]
    if not measured:
        return None, len(times)
    goal, best = min(measured) / 0.95, math.inf
    for trial, t in enumerate(times, 1):
        best = min(best, t if t is not None else math.inf)
        if best <= goal:
            return trial, len(times)
    return None, len(times)


def measure_peak(program, *args):
    out, rc, err = run_json([program, *args])
    if out is None or rc != 0:
        sys.exit(f"{program} failed ({rc}): {err}")
    return out


def us(seconds):
    return f"{seconds * 1e6:.1f}" if seconds else "n/a"


def roofline_seconds(row, peak):
    """The op's time at the machine's limits: its FLOPs at the FMA peak or its bytes at its bandwidth
    (the read bandwidth, or the triad's for an op that writes as much as it reads)."""
    measured = row if "read_gbs" in row else peak  # the round's own bandwidth, for a cold op
    gbs = measured["triad_gbs"] if row.get("bandwidth") == "triad" else measured["read_gbs"]
    return max(row["gflop"] / peak["fma_gflops"], row["mbytes"] * 1e-3 / gbs)


def print_table(rows, onednn_built, peak):
    print(f"\nmachine (measured in this run, best of before and after): fp32 FMA peak {peak['fma_gflops']:.1f} "
          f"GFLOP/s on {peak['threads']} threads, read {peak['read_gbs']:.1f} GB/s, triad {peak['triad_gbs']:.1f} GB/s")
    print(f"\n{'shape':<22} {'GFLOP':>7} {'tuned us':>10} {'GFLOP/s':>8} {'roofline':>8} {'run us':>10} "
          f"{'ort us':>10} {'oneDNN us':>10} {'ratio':>6}  check")
    for r in rows:
        if "error" in r:
            print(f"{r['shape']:<22} {r['gflop']:>7.3f}  {r['error'].splitlines()[-1][:150]}")
            continue
        check = "ok" if r["check_ok"] else f"DIFFERS ({r['max_relative_error']:.2g})"
        r["roofline_share"] = roofline_seconds(r, peak) / r["tuned_kernel_seconds"]
        print(f"{r['shape']:<22} {r['gflop']:>7.3f} {us(r['tuned_kernel_seconds']):>10} "
              f"{r['gflop'] / r['tuned_kernel_seconds']:>8.1f} {r['roofline_share']:>8.1%} "
              f"{us(r['tuned_run_seconds']):>10} "
              f"{us(r['onnxruntime_seconds']):>10} {us(r.get('onednn_seconds')):>10} {r['ratio']:>6.2f}  {check}"
              + ("  cold, read GB/s " + "/".join(f"{g:.0f}" for g in r.get("round_read_gbs", [])) if r.get("cold") else "")
              + (f", paired roofline {r['paired_roofline_share']:.1%}" if "paired_roofline_share" in r else ""))
    ratios = [r["ratio"] for r in rows if "ratio" in r]
    geomean = math.exp(sum(map(math.log, ratios)) / len(ratios)) if ratios else None
    if geomean:
        print(f"geometric mean of the ratios over {len(ratios)} shapes: {geomean:.3f}")
    print("tuned us: median time inside tuned's kernel (run-model's kernel_median_seconds); roofline: the op's "
          "time at the FMA peak or the read (triad, for ops that write as much as they read) bandwidth / tuned us;\n"
          "a cold op's bandwidth is measured around the round of tuned's time (GB/s column: read, per round);\n"
          f"paired roofline: the median over {PAIRS} pairs of the share against the mean of two probes just before and after "
          f"{PAIR_RUNS} cold runs;\nrun us: the whole run-model step; "
          "ratio: the faster library's time / tuned's within a round, median over the rounds (> 1: tuned is faster); cold: tensors larger than the "
          "last-level cache, every runtime timed one run at a time after a cache flush"
          + ("" if onednn_built else "; oneDNN not built (tuned_onednn_op missing): ratios against onnxruntime only"))
    def share(r, part):
        return f"{100 * r[part + '_share']:.0f}%" if part + "_share" in r else "-"

    print(f"\n{'shape':<22} {'trials':>6} {'to 95%':>6} {'tune s':>8} {'s/trial':>7} {'search':>6} {'builds':>6} "
          f"{'runs':>5} {'from log':>8}  oneDNN implementation")
    for r in rows:
        print(f"{r['shape']:<22} {r.get('trials', '-'):>6} {r.get('trials_to_95') or '-':>6} "
              f"{r['tune_wall_seconds']:>8.1f} {r.get('seconds_per_trial', 0):>7.2f} {share(r, 'search'):>6} "
              f"{share(r, 'build'):>6} {share(r, 'run'):>5} "
              f"{r.get('tasks_from_log', '-'):>8}  {r.get('onednn_implementation', r.get('onednn_error', 'n/a'))}")
    print("to 95%: search trials until the running best reached 95% of the final best's throughput;\n"
          "search, builds, runs: shares of the tuning rounds' wall time (builds overlap the runs and each other)")
    return geomean


def main():
    p = argparse.ArgumentParser()
    p.add_argument("shapes", nargs="*", help="shape names (default: all)")
    p.add_argument("--trials", type=int, default=128)
    p.add_argument("--repeat", type=int, default=50, help="timed runs of tuned, samples of onnxruntime")
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--venv", default="", help="default: BUILD/ort-venv")
    p.add_argument("--work", default="", help="default: a new folder under /tmp")
    p.add_argument("--rounds", type=int, default=3,
                   help="rounds of timing every runtime; each keeps its fastest round median")
    p.add_argument("--retime", action="store_true",
                   help="reuse each op's log in --work (an earlier sweep's folder) instead of tuning: time it again")
    a = p.parse_args()
    a.venv = a.venv or os.path.join(a.build, "ort-venv")
    ensure_onnxruntime(a.venv)  # runs this script again in the venv (onnx, onnxruntime) if needed
    from shapes import SHAPES

    by_name = {s.name: s for s in SHAPES}
    unknown = [n for n in a.shapes if n not in by_name]
    if unknown:
        sys.exit(f"unknown shape(s) {', '.join(unknown)}; the shapes: {' '.join(by_name)}")
    tuned = os.path.join(a.build, "cli", "tuned")
    onednn = os.path.join(a.build, "bench", "tuned_onednn_op")
    onednn = onednn if os.path.exists(onednn) else None
    a.work = a.work or tempfile.mkdtemp(prefix="tuned-sweep-")
    a.machine_peak = machine_peak = os.path.join(a.build, "bench", "tuned_machine_peak")
    peaks = [measure_peak(machine_peak)]
    rows = []
    for shape in [by_name[n] for n in a.shapes] if a.shapes else SHAPES:
        reuse = a.retime and os.path.exists(os.path.join(a.work, shape.name, "tuned.db"))
        print(f"{shape.name}: {'timing its log again' if reuse else f'tuning {a.trials} trials'} ...",
              file=sys.stderr, flush=True)
        rows.append(sweep_shape(shape, a, tuned, onednn))
        print(f"{shape.name}: {json.dumps(rows[-1])}", file=sys.stderr, flush=True)
    peaks.append(measure_peak(machine_peak))
    peak = {k: max(p[k] for p in peaks) for k in peaks[0]}
    geomean = print_table(rows, onednn is not None, peak)
    path = os.path.join(a.work, "sweep.json")
    with open(path, "w") as f:
        json.dump({"trials": a.trials, "repeat": a.repeat, "rounds": a.rounds, "cpu_count": os.cpu_count(), "onednn_built": bool(onednn),
                   "machine_peak": peaks,
                   "geomean_ratio": geomean, "rows": rows}, f, indent=2)
    print(f"\ntable as JSON: {path}\nwork folder (models, logs, libraries): {a.work}")
    if any("error" in r or not r.get("check_ok") for r in rows):
        sys.exit(1)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""A model through tuned's compiled kernels against onnxruntime's CPU provider, on the same inputs.

    compare_onnxruntime.py --tuned BIN --model M.onnx --work DIR [--db DB] [--trials N]
                           [--venv DIR] [--tolerance T] [--repeat R] [--min-sample-seconds S]
                           [--flush-cache]

With --trials, the model is first tuned with that budget (`tuned tune --model`, embedded, into
--db); then `tuned compile --model` builds its library from the log (default schedules where it
has no record), `tuned run-model --save` runs it on seeded random inputs, and onnxruntime runs
the model file on the same inputs. Every output must match within the float32 tolerance of
tuned's verification: |tuned - ort| <= T * max(1, |ort|). Prints both latencies (median of
--repeat samples each, each runtime in its own process, one thread pool each). With
--min-sample-seconds, each sample of both runtimes runs the model until it lasts that long and
counts the time per run, so a small model is not timed by Python's overhead and both medians
span about as long a stretch of the host's time. With
--flush-cache every timed run of both runtimes starts cold: each follows the untimed read of
common/cache_flush.h (`tuned run-model --flush-cache`; here one run per sample).

onnxruntime comes from PyPI (`scripts/test.sh` installs it into build/ort-venv): when this
interpreter lacks it, the script runs itself again with --venv's Python, and without that it
exits 77, which CTest reports as a skip.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time

SKIP = 77


def ensure_onnxruntime(venv):
    try:
        import onnxruntime  # noqa: F401
        return
    except ImportError:
        pass
    python = os.path.join(venv, "bin", "python") if venv else ""
    if python and os.path.exists(python) and os.path.realpath(sys.prefix) != os.path.realpath(venv):
        os.execv(python, [python] + sys.argv)
    print(f"onnxruntime is not installed (looked in this Python and in '{venv}'); skipping", file=sys.stderr)
    sys.exit(SKIP)


def last_level_cache_bytes():
    """cpu 0's last-level data cache from sysfs, as common/cache_flush.h's ProbeHostCaches reads
    it (the one its cores share), 0 when hidden."""
    root, best = "/sys/devices/system/cpu/cpu0/cache", (0, 0)
    for index in sorted(os.listdir(root)) if os.path.isdir(root) else []:
        def read(name):
            with open(os.path.join(root, index, name)) as f:
                return f.read().strip()
        try:
            level, kind, size = int(read("level")), read("type"), read("size")
        except (OSError, ValueError):
            continue
        if kind != "Instruction" and level > best[0]:
            best = (level, int(size.rstrip("KM")) << {"K": 10, "M": 20}.get(size[-1], 0))
    return best[1]


def flush_bytes(llc):
    """common/cache_flush.h's FlushBytes, kept in step: 4x the cache, within [256 MiB, 1 GiB]."""
    return min(max(4 * llc, 256 << 20), 1 << 30)


def tuned(binary, *args):
    result = subprocess.run([binary, *args], capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"tuned {' '.join(args)} failed ({result.returncode}): {result.stderr.strip()[-2000:]}")
    return result.stdout


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--tuned", required=True)
    p.add_argument("--model", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--db")
    p.add_argument("--trials", type=int, default=0)
    p.add_argument("--round-trials", type=int, default=1)
    p.add_argument("--venv", default="")
    p.add_argument("--tolerance", type=float, default=1e-4)
    p.add_argument("--repeat", type=int, default=1)
    p.add_argument("--min-sample-seconds", type=float, default=0.0)
    p.add_argument("--flush-cache", action="store_true")
    a = p.parse_args()
    ensure_onnxruntime(a.venv)
    import numpy as np
    import onnx
    import onnxruntime as ort

    # A fresh work folder each time: its log starts empty unless --db names one.
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    db = a.db or os.path.join(a.work, "tuned.db")
    if not a.trials and not os.path.exists(db):
        sys.exit("nothing to compile from: give --trials, or --db with records")
    name = os.path.splitext(os.path.basename(a.model))[0]
    if a.trials:
        tuned(a.tuned, "tune", "--model", a.model, "--db", db, "--trials", str(a.trials),
              "--round-trials", str(a.round_trials), "--json")
    library = os.path.join(a.work, name + ".so")
    compiled = json.loads(tuned(a.tuned, "compile", "--model", a.model, "--db", db, "-o", library, "--json"))
    io = os.path.join(a.work, "io")
    run = json.loads(tuned(a.tuned, "run-model", "--model", a.model, "--library", library, "--save", io,
                           "--repeat", str(a.repeat), "--min-sample-seconds", str(a.min_sample_seconds), "--json",
                           *(["--flush-cache"] if a.flush_cache else [])))

    model = onnx.load(a.model)
    options = ort.SessionOptions()
    options.intra_op_num_threads = os.cpu_count()
    session = ort.InferenceSession(a.model, options, providers=["CPUExecutionProvider"])
    feeds = {}
    for i in session.get_inputs():
        feeds[i.name] = np.fromfile(os.path.join(io, i.name.replace("/", "_") + ".bin"), np.float32).reshape(i.shape)
    outputs = session.run(None, feeds)
    times = []
    # The flush of common/cache_flush.h: one read per cache line, over pages written before
    # (np.ones: calloc's zeros would all be one page).
    flush = np.ones(flush_bytes(last_level_cache_bytes()), np.uint8) if a.flush_cache else None
    for _ in range(a.repeat):
        if flush is not None:
            int(flush[::64].sum())
        runs, start = 0, time.perf_counter()
        while runs == 0 or (flush is None and elapsed < a.min_sample_seconds):
            session.run(None, feeds)
            runs += 1
            elapsed = time.perf_counter() - start
        times.append(elapsed / runs)
    worst = 0.0
    for o, expected in zip(session.get_outputs(), outputs):
        got = np.fromfile(os.path.join(io, o.name.replace("/", "_") + ".bin"), np.float32).reshape(expected.shape)
        error = float(np.max(np.abs(got.astype(np.float64) - expected) / np.maximum(1.0, np.abs(expected))))
        worst = max(worst, error)
    report = {"model": a.model, "max_relative_error": worst, "tolerance": a.tolerance,
              "tasks_from_log": compiled["from_record"], "tasks": compiled["tasks"],
              "tuned_median_seconds": run["median_seconds"], "tuned_kernel_median_seconds": run["kernel_median_seconds"],
              "onnxruntime_median_seconds": sorted(times)[len(times) // 2], "onnxruntime": ort.__version__,
              "opset": model.opset_import[0].version, "cold": a.flush_cache}
    if "estimated_seconds" in run:
        report["tuned_estimated_seconds"] = run["estimated_seconds"]
    print(json.dumps(report, indent=2))
    if not worst <= a.tolerance:
        sys.exit(f"{a.model}: tuned's outputs differ from onnxruntime's by {worst:.3g} (tolerance {a.tolerance:g})")


if __name__ == "__main__":
    main()

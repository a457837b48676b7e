"""Where a whole-model latency goes, ours beside ONNX Runtime's, on one model: (a) the sum of the
per-op minima, (b) the sum of the per-op medians, (c) the per-run sum of op times, (d) the whole run
as the profilers see it (ours: optimium-benchmark, infer() to wait() returning; ORT: its model_run
event) and (e) the whole run as bench/worker.py times it (request.run / sess.run in Python, no
profiler). Every measurement runs in a fresh process, rounds alternate who goes first, and each
starts only when `ps` shows no other running process (bench/quiet_ab.py's rule). Inputs: the
model folder's input_*.npy on every side. A diagnostic, never a test.

    python bench/decompose.py MODEL_DIR [--benchmark build/optimium-benchmark] [--threads 1]
        [--rounds 4] [--runs 200] [--per-op 10]

--benchmark's folder must hold the runtime library it loads; Python's `optimium.runtime` is
whatever the interpreter imports (a venv with the wheel of the same build). Minima are over all
rounds, medians the median of the per-round medians.
"""
import argparse
import bisect
import collections
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from quiet_ab import other_process_running  # noqa: E402


def wait_quiet(budget_s):
    t0 = time.time()
    while other_process_running() and time.time() - t0 < budget_s:
        time.sleep(0.2)


def per_run(runs, ops):
    """runs: [(ts, dur)] of whole runs; ops: [(name, ts, dur)] (us). Returns the per-op lists of
    durations and, per run, the sum of its op durations."""
    runs = sorted(runs)
    starts = [r[0] for r in runs]
    sums = [0.0] * len(runs)
    by_op = collections.defaultdict(list)
    for name, ts, dur in ops:
        i = bisect.bisect_right(starts, ts) - 1
        if i < 0 or ts > runs[i][0] + runs[i][1]:
            continue
        sums[i] += dur
        by_op[name].append(dur)
    return by_op, sums


def ours_cpp(benchmark, model_dir, threads, runs, tmp):
    trace, js = os.path.join(tmp, "ours.trace.json"), os.path.join(tmp, "ours.json")
    subprocess.run([benchmark, os.path.join(model_dir, "model.onnx"), f"--threads={threads}", f"--runs={runs}",
                    "--warmup=10", f"--json={js}", f"--trace={trace}", f"--input=@{model_dir}/input_0.npy"],
                   env=dict(os.environ, LD_LIBRARY_PATH=os.path.dirname(os.path.abspath(benchmark))),
                   check=True, capture_output=True)
    with open(js) as f:
        d = json.load(f)
    # The profiled runs, as (d) means; latency_ms is of the unprofiled runs where profiled_latency_ms exists.
    lat = d.get("profiled_latency_ms", d["latency_ms"])
    with open(trace) as f:
        ev = json.load(f)["traceEvents"]
    begins = {e["id"]: e["ts"] for e in ev if e.get("cat") == "model" and e["ph"] == "b"}
    runs = [(begins[e["id"]], e["ts"] - begins[e["id"]]) for e in ev if e.get("cat") == "model" and e["ph"] == "e"]
    ops = [(e["name"], e["ts"], e["dur"]) for e in ev if e.get("cat") == "layer"]
    by_op, sums = per_run(runs, ops)
    return {"lat_min": lat["min"], "lat_median": lat["median"], "by_op": by_op, "sums": sums,
            "model_ms": [d / 1e3 for _, d in runs]}


def ort_profiled(model_dir, threads, runs):
    """Runs in a child process (this file with --ort-child)."""
    out = subprocess.run([sys.executable, __file__, model_dir, "--ort-child", "--threads", str(threads), "--runs",
                          str(runs)], check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def ort_child(model_dir, threads, runs):
    import numpy as np
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.enable_profiling = True
    so.profile_file_prefix = os.path.join(tempfile.mkdtemp(), "ort")
    s = ort.InferenceSession(os.path.join(model_dir, "model.onnx"), so, providers=["CPUExecutionProvider"])
    feeds = {i.name: np.load(os.path.join(model_dir, f"input_{k}.npy")) for k, i in enumerate(s.get_inputs())}
    lat = []
    for k in range(10 + runs):
        t = time.perf_counter()
        s.run(None, feeds)
        if k >= 10:
            lat.append((time.perf_counter() - t) * 1e3)
    path = s.end_profiling()
    with open(path) as f:
        ev = json.load(f)
    os.remove(path)
    runs_ev = [(e["ts"], e["dur"]) for e in ev if e.get("cat") == "Session" and e["name"] == "model_run"][10:]
    ops = [(e["name"][: -len("_kernel_time")], e["ts"], e["dur"]) for e in ev
           if e.get("cat") == "Node" and e["name"].endswith("_kernel_time")]
    by_op, sums = per_run(runs_ev, ops)
    print(json.dumps({"lat_min": min(lat), "lat_median": statistics.median(lat), "by_op": by_op, "sums": sums,
                      "model_ms": [d / 1e3 for _, d in runs_ev]}))


def python_side(which, model_dir, threads, runs):
    from bench import Worker
    w = Worker(which, model_dir, "", threads)
    try:
        w.call(cmd="run", n=10)
        t = w.call(cmd="run", n=runs)["times_ms"]
    finally:
        w.close()
    return t


def summarize(samples):
    """samples: per round, the dict of one side's profiled measurement."""
    names = samples[0]["by_op"].keys()
    s = {}
    s["sum_op_min"] = sum(min(min(r["by_op"][n]) for r in samples) for n in names) / 1e3
    s["sum_op_med"] = statistics.median(sum(statistics.median(r["by_op"][n]) for n in names) for r in samples) / 1e3
    s["run_op_sum_min"] = min(min(r["sums"]) for r in samples) / 1e3
    s["run_op_sum_med"] = statistics.median(statistics.median(r["sums"]) for r in samples) / 1e3
    s["model_min"] = min(min(r["model_ms"]) for r in samples)
    s["model_med"] = statistics.median(statistics.median(r["model_ms"]) for r in samples)
    s["lat_min"] = min(r["lat_min"] for r in samples)
    s["lat_med"] = statistics.median(r["lat_median"] for r in samples)
    # per run: the part of the run outside the ops (model span minus the op sum)
    s["outside_med"] = statistics.median(
        statistics.median(m - o / 1e3 for m, o in zip(r["model_ms"], r["sums"])) for r in samples)
    return s


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model_dir")
    ap.add_argument("--benchmark", default=os.path.join(HERE, "..", "build", "optimium-benchmark"))
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--per-op", type=int, default=10, help="ops with the largest median gap (ours - min) to list")
    ap.add_argument("--quiet-budget", type=float, default=60, help="seconds to wait for a quiet machine per step")
    ap.add_argument("--ort-child", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.ort_child:
        ort_child(a.model_dir, a.threads, a.runs)
        return
    prof = {"ours": [], "ort": []}
    py = {"ours": [], "ort": []}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(a.rounds):
            for k in (("ours", "ort") if r % 2 == 0 else ("ort", "ours")):
                wait_quiet(a.quiet_budget)
                prof[k].append(ours_cpp(a.benchmark, a.model_dir, a.threads, a.runs, tmp) if k == "ours"
                               else ort_profiled(a.model_dir, a.threads, a.runs))
                wait_quiet(a.quiet_budget)
                py[k].append(python_side(k, a.model_dir, a.threads, a.runs))
    print(f"{a.model_dir} threads {a.threads}: {a.rounds} rounds x {a.runs} runs (ms; min over rounds / "
          f"median of round medians)")
    rows = [("(a) sum of per-op minima", "sum_op_min", None), ("(b) sum of per-op medians", "sum_op_med", None),
            ("(c) per-run sum of op times", "run_op_sum_min", "run_op_sum_med"),
            ("(c') per run outside the ops (median)", None, "outside_med"),
            ("(d) profiled run (ModelExecute / model_run)", "model_min", "model_med"),
            ("(d') profiled latency (ours: infer..wait; ORT: profiled sess.run)", "lat_min", "lat_med")]
    S = {k: summarize(prof[k]) for k in prof}
    print(f"| {'quantity':64s} | {'ours min':>9s} | {'ours med':>9s} | {'ORT min':>9s} | {'ORT med':>9s} |")
    for label, kmin, kmed in rows:
        f = lambda k, key: f"{S[k][key]:9.3f}" if key else " " * 9
        print(f"| {label:64s} | {f('ours', kmin)} | {f('ours', kmed)} | {f('ort', kmin)} | {f('ort', kmed)} |")
    P = {k: (min(min(t) for t in py[k]), statistics.median(statistics.median(t) for t in py[k])) for k in py}
    print(f"| {'(e) Python, bench/worker.py (request.run / sess.run), no profiler':64s} | {P['ours'][0]:9.3f} | "
          f"{P['ours'][1]:9.3f} | {P['ort'][0]:9.3f} | {P['ort'][1]:9.3f} |")
    print("  per round, Python medians ours/ORT: " +
          " ".join(f"{statistics.median(o):.3f}/{statistics.median(x):.3f}" for o, x in zip(py["ours"], py["ort"])))
    print("  per round, per-run op sum medians ours/ORT: " +
          " ".join(f"{statistics.median(o['sums']) / 1e3:.3f}/{statistics.median(x['sums']) / 1e3:.3f}"
                   for o, x in zip(prof["ours"], prof["ort"])))
    ours = prof["ours"]
    gaps = []
    for n in ours[0]["by_op"]:
        mn = min(min(r["by_op"][n]) for r in ours)
        md = statistics.median(statistics.median(r["by_op"][n]) for r in ours)
        gaps.append((md - mn, n, mn, md))
    print(f"  ours, ops with the largest median - min (us): " +
          "; ".join(f"{n[-40:]} {mn:.0f}/{md:.0f}" for _, n, mn, md in sorted(gaps, reverse=True)[: a.per_op]))


if __name__ == "__main__":
    main()

"""A/B of two builds' optimium-benchmark on a machine shared with other work: each pair of runs
(A then B, B then A alternately) starts only when `ps` shows no other running process, so a pair
is not split by someone else's build. Prints whole-model min / median of medians and, per op
matching --ops, the min and median over the pairs of each binary's per-op minimum.

    python bench/quiet_ab.py MODEL.onnx --a /work/base --b build --threads 2 --pairs 12 --runs 100 \
        --ops classifier,features.2/

--a / --b are folders holding optimium-benchmark and the runtime library it loads. Whole-model
figures are of unprofiled runs (optimium-benchmark's latency_ms); an optimium-benchmark that predates
unprofiled latency (no profiled_latency_ms in its JSON) reports profiled runs there, so against one
both sides' profiled latencies are compared instead, and the output says so. Per-op figures come
from the profiled pass. A measurement tool, not a test.
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time


def other_process_running():
    out = subprocess.run(["ps", "-eo", "stat,comm", "--no-headers"], capture_output=True, text=True).stdout
    for line in out.splitlines():
        parts = line.split(None, 1)
        if len(parts) == 2 and parts[0].startswith("R") and parts[1].strip() not in ("ps", "python3", "python"):
            return True
    return False


def run(folder, model, threads, runs, out):
    subprocess.run([os.path.join(folder, "optimium-benchmark"), model, f"--threads={threads}", f"--runs={runs}",
                    "--warmup=10", f"--json={out}"], env=dict(os.environ, LD_LIBRARY_PATH=folder),
                   capture_output=True, check=True)
    with open(out) as f:
        d = json.load(f)
    # (unprofiled latency or None, profiled latency, per-op minima)
    plain, profiled = (d["latency_ms"], d["profiled_latency_ms"]) if "profiled_latency_ms" in d else (None, d["latency_ms"])
    return plain, profiled, {o["name"]: o["min_us"] for o in d["ops"]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--a", required=True)
    ap.add_argument("--b", required=True)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--pairs", type=int, default=10)
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--budget", type=float, default=300, help="seconds to wait for quiet windows at most")
    ap.add_argument("--ops", default="", help="comma-separated substrings of op names to report")
    a = ap.parse_args()
    res = {"A": [], "B": []}
    folders = {"A": a.a, "B": a.b}
    skipped, start = 0, time.time()
    with tempfile.TemporaryDirectory() as tmp:
        while len(res["A"]) < a.pairs and time.time() - start < a.budget:
            if other_process_running():
                skipped += 1
                time.sleep(0.2)
                continue
            order = ["A", "B"] if len(res["A"]) % 2 == 0 else ["B", "A"]
            for k in order:
                res[k].append(run(folders[k], a.model, a.threads, a.runs, os.path.join(tmp, k + ".json")))
    print(f"{a.model} threads {a.threads}: {len(res['A'])} quiet pairs ({skipped} busy checks skipped)")
    if not res["A"]:
        return
    both_plain = all(r[0] is not None for k in ("A", "B") for r in res[k])
    print("  whole runs: " + ("unprofiled" if both_plain else
                              "profiled (one optimium-benchmark reports no unprofiled latency)"))
    for k in ("A", "B"):
        lat = [r[0] if both_plain else r[1] for r in res[k]]
        mins = [x["min"] for x in lat]
        meds = [x["median"] for x in lat]
        print(f"  {k} ({folders[k]}): min {min(mins):.3f} ms, median of medians {statistics.median(meds):.3f} "
              f"[{' '.join(f'{m:.2f}' for m in meds)}]")
    for w in [w for w in a.ops.split(",") if w]:
        for name in res["A"][0][2]:
            if w in name:
                va = [r[2].get(name, float("nan")) for r in res["A"]]
                vb = [r[2].get(name, float("nan")) for r in res["B"]]
                print(f"  {name[-50:]:50s} A {min(va):8.1f} / {statistics.median(va):8.1f}   "
                      f"B {min(vb):8.1f} / {statistics.median(vb):8.1f}  (us: min / median of per-pair minima)")


if __name__ == "__main__":
    main()

"""The opt-in bfloat16 compute mode (compute_precision="bf16") against float32, ours and ONNX
Runtime's, on the same build: three worker processes per model and thread count (bench.py's
Worker), their batches alternating with settle pauses. Prints median latencies and the ratios
ours-bf16 / ORT-fp32, ours-fp32 / ORT-fp32 and ours-bf16 / ours-fp32, plus each worker's max abs
error against the PyTorch reference output (output_0.npy). A benchmark, never a test.

    PYTHONPATH=<our package> python bench/bf16_compute.py --models build/exported-models \\
        [--only resnet18,resnet50,convnext_tiny,bert_mini] [--threads 1,2] [--rounds 6]
"""
import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import Worker, run_rotated  # noqa: E402

KINDS = ("ours", "ours-bf16", "ort")


def bench_model(model_dir, threads, rounds, budget_ms, settle_s):
    w = {k: Worker(k, model_dir, "", threads) for k in KINDS}
    times, _ = run_rotated(w, rounds, budget_ms, settle_s)
    out = {}
    for k in KINDS:
        out[k] = {"median_ms": float(np.median(times[k])), "runs": len(times[k]),
                  "max_abs_err_vs_pytorch": w[k].call(cmd="stats")["max_abs_err"]}
        w[k].close()
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", required=True)
    ap.add_argument("--only", default="resnet18,resnet50,convnext_tiny,bert_mini")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--batch-ms", type=float, default=300.0)
    ap.add_argument("--settle-ms", type=float, default=150.0)
    ap.add_argument("--json", default="build/bench/bf16_compute.json")
    a = ap.parse_args()
    rows = []
    print("| model | thr | ours fp32 ms | ours bf16 ms | ORT fp32 ms | bf16/ORT | fp32/ORT | bf16/fp32 | max abs err vs PyTorch fp32 / bf16 / ORT |")
    print("|" + "---|" * 9)
    for name in [s for s in a.only.split(",") if s]:
        d = os.path.join(a.models, name)
        for thr in [int(t) for t in a.threads.split(",")]:
            r = bench_model(d, thr, a.rounds, a.batch_ms, a.settle_ms / 1e3)
            f, b, o = (r[k]["median_ms"] for k in KINDS)
            e = [r[k]["max_abs_err_vs_pytorch"] for k in KINDS]
            rows.append({"model": name, "threads": thr, **{k: r[k] for k in KINDS}})
            es = " / ".join("-" if x is None else f"{x:.2g}" for x in e)
            print(f"| {name} | {thr} | {f:.3f} | {b:.3f} | {o:.3f} | {b / o:.2f} | {f / o:.2f} | {b / f:.2f} | {es} |",
                  flush=True)
    os.makedirs(os.path.dirname(os.path.abspath(a.json)), exist_ok=True)
    with open(a.json, "w") as fh:
        json.dump({"cpu_count": os.cpu_count(), "loadavg": os.getloadavg()[0], "rows": rows}, fh, indent=1)


if __name__ == "__main__":
    main()

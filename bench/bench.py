"""Side-by-side benchmark: our runtime vs ONNX Runtime on the same ONNX files, inputs and thread
counts. Each runtime runs in its own worker process; batches alternate between them so machine
noise hits both alike, each batch after a settle pause (--settle-ms) in which the other runtime's
worker threads stop spinning (ONNX Runtime's keep spinning for about 50 ms after a run: started
at once, the next batch shared the 2 cores with them for its first 5 or so runs). Prints a table (median, p90, ratio ours/ORT, CPU-time ratio, load + first
inference, peak RSS) and writes JSON. A benchmark, never a test: nothing here asserts a speed.

    python bench/bench.py --models DIR [--lowprec-models DIR] [--only mnist_cnn,...] [--threads 1,2] [--rounds 10]

Reduced-precision cases (models of scripts/make-lowprec-models.sh) run ours on the reduced-precision
model against ONNX Runtime on the float32 model it was made from (the performance target: at most
0.5x of ORT float32), and against ORT on the same reduced-precision model for reference.
"""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))

# (label, model folder for ours, model folder for ORT, input file prefix). A folder is relative to
# --models, or to --lowprec-models when it starts with "lowprec:".
CASES = [
    ("mnist_cnn", "mnist_cnn", "mnist_cnn", ""),
    ("mobilenet_v2", "mobilenet_v2", "mobilenet_v2", ""),
    ("resnet18", "resnet18", "resnet18", ""),
    ("efficientnet_b0", "efficientnet_b0", "efficientnet_b0", ""),
    ("mobilenet_v3_small", "mobilenet_v3_small", "mobilenet_v3_small", ""),
    ("squeezenet1_1", "squeezenet1_1", "squeezenet1_1", ""),
    ("resnet50", "resnet50", "resnet50", ""),
    ("convnext_tiny", "convnext_tiny", "convnext_tiny", ""),
    ("resnet18 int8 vs ORT fp32", "lowprec:resnet18_int8", "resnet18", ""),
    ("resnet18 int8", "lowprec:resnet18_int8", "lowprec:resnet18_int8", ""),
    ("bert_mini seq128", "bert_mini", "bert_mini", ""),
    ("gpt past128", "gpt2_tiny_decoder", "gpt2_tiny_decoder", ""),
    ("gpt past1024", "gpt2_tiny_decoder", "gpt2_tiny_decoder", "past1024_"),
    ("gpt past128 bf16 weights vs ORT fp32", "lowprec:gpt2_tiny_decoder_bf16w", "gpt2_tiny_decoder", ""),
    ("gpt past1024 bf16 weights vs ORT fp32", "lowprec:gpt2_tiny_decoder_bf16w", "gpt2_tiny_decoder", "past1024_"),
    ("gpt past128 bf16 weights", "lowprec:gpt2_tiny_decoder_bf16w", "lowprec:gpt2_tiny_decoder_bf16w", ""),
    ("bert_mini int8 dynamic vs ORT fp32", "lowprec:bert_mini_int8dyn", "bert_mini", ""),
    ("bert_mini int8 dynamic", "lowprec:bert_mini_int8dyn", "lowprec:bert_mini_int8dyn", ""),
    ("gpt past128 int8 dynamic vs ORT fp32", "lowprec:gpt2_tiny_decoder_int8dyn", "gpt2_tiny_decoder", ""),
    ("gpt past128 int8 dynamic", "lowprec:gpt2_tiny_decoder_int8dyn", "lowprec:gpt2_tiny_decoder_int8dyn", ""),
]


class Worker:
    def __init__(self, which, model_dir, prefix, threads):
        env = dict(os.environ)
        self.p = subprocess.Popen([sys.executable, os.path.join(HERE, "worker.py"), which, model_dir, prefix,
                                   str(threads)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
        self.ready = self._read()

    def _read(self):
        line = self.p.stdout.readline()
        if not line:
            raise RuntimeError(f"worker exited with {self.p.wait()}")
        return json.loads(line)

    def call(self, **cmd):
        self.p.stdin.write(json.dumps(cmd) + "\n")
        self.p.stdin.flush()
        return self._read()

    def close(self):
        try:
            self.p.stdin.write(json.dumps({"cmd": "quit"}) + "\n")
            self.p.stdin.flush()
        except BrokenPipeError:
            pass
        self.p.wait()


def batch_size(one_ms, budget_ms):
    return max(1, min(2000, int(budget_ms / max(one_ms, 1e-3))))


def run_rotated(w, rounds, budget_ms, settle_s):
    """Warms up each worker of w (a dict) and sizes its batches to about budget_ms, then runs rounds
    of one batch per worker, each after a settle pause, rotating who goes first. Returns the
    latencies (ms) and process CPU seconds per worker."""
    n = {k: batch_size(float(np.median(w[k].call(cmd="run", n=3)["times_ms"])), budget_ms) for k in w}
    times = {k: [] for k in w}
    cpu = {k: 0.0 for k in w}
    keys = list(w)
    for r in range(rounds):
        for k in keys[r % len(keys):] + keys[:r % len(keys)]:
            time.sleep(settle_s)
            res = w[k].call(cmd="run", n=n[k])
            times[k] += res["times_ms"]
            cpu[k] += res["cpu_s"]
    return times, cpu


def bench_case(model_dirs, prefix, threads, rounds, budget_ms, load_samples, settle_s):
    # Load + first inference from fresh processes, load_samples times per runtime (alternating who
    # starts first); the median goes into the table. The last pair of workers stays for the runs.
    loads = {"ours": [], "ort": []}
    w = {}
    for i in range(load_samples):
        for k in (("ours", "ort") if i % 2 == 0 else ("ort", "ours")):
            wk = Worker(k, model_dirs[k], prefix, threads)
            loads[k].append(wk.ready["load_first_ms"])
            if i + 1 < load_samples:
                wk.close()
            else:
                w[k] = wk
    times, cpu = run_rotated(w, rounds, budget_ms, settle_s)
    out = {}
    for k in w:
        st = w[k].call(cmd="stats")
        t = np.array(times[k])
        out[k] = {"median_ms": float(np.median(t)), "p90_ms": float(np.percentile(t, 90)),
                  "runs": int(t.size), "cpu_ms_per_run": cpu[k] * 1e3 / t.size,
                  "load_first_ms": float(np.median(loads[k])), "load_first_samples_ms": loads[k],
                  "peak_rss_mib": st["peak_rss_mib"],
                  "max_abs_err_vs_pytorch": st["max_abs_err"]}
        w[k].close()
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", required=True, help="folder written by scripts/export-models.sh")
    ap.add_argument("--lowprec-models", default="",
                    help="folder written by scripts/make-lowprec-models.sh (default: lowprec-models beside --models)")
    ap.add_argument("--only", default="", help="comma-separated labels or model folders")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=10, help="alternating batches per runtime")
    ap.add_argument("--batch-ms", type=float, default=300.0, help="target duration of one batch")
    ap.add_argument("--settle-ms", type=float, default=150.0,
                    help="pause before each batch, so the other runtime's threads stop spinning first")
    ap.add_argument("--load-samples", type=int, default=3,
                    help="fresh worker processes per runtime whose load + first inference is timed (median)")
    ap.add_argument("--json", default="build/bench/results.json")
    a = ap.parse_args()
    only = [s for s in a.only.split(",") if s]
    import onnxruntime
    results = {"onnxruntime_version": onnxruntime.__version__, "cpu_count": os.cpu_count(),
               "loadavg_start": os.getloadavg()[0], "cases": []}
    header = ("| model | thr | ours ms | ORT ms | ratio | p90 ours/ORT | CPU-time ratio | load+1st ms ours/ORT (ratio) "
              "| peak RSS MiB ours/ORT (ratio) |")
    print(header)
    print("|" + "---|" * 9)
    lowprec = a.lowprec_models or os.path.join(os.path.dirname(os.path.abspath(a.models)), "lowprec-models")

    def resolve(folder):
        return os.path.join(lowprec, folder[8:]) if folder.startswith("lowprec:") else os.path.join(a.models, folder)

    for label, ours_folder, ort_folder, prefix in CASES:
        names = {ours_folder, ort_folder, ours_folder.replace("lowprec:", ""), ort_folder.replace("lowprec:", "")}
        if only and label not in only and not names & set(only):
            continue
        model_dirs = {"ours": resolve(ours_folder), "ort": resolve(ort_folder)}
        missing = [d for d in model_dirs.values() if not os.path.exists(os.path.join(d, "model.onnx"))]
        if missing:
            print(f"| {label} | - | skipped: {missing[0]}/model.onnx not found |")
            continue
        for thr in [int(t) for t in a.threads.split(",")]:
            r = bench_case(model_dirs, prefix, thr, a.rounds, a.batch_ms, max(1, a.load_samples), a.settle_ms / 1e3)
            o, x = r["ours"], r["ort"]
            row = {"model": label, "threads": thr, **{f"ours_{k}": v for k, v in o.items()},
                   **{f"ort_{k}": v for k, v in x.items()},
                   "ratio": o["median_ms"] / x["median_ms"], "cpu_ratio": o["cpu_ms_per_run"] / x["cpu_ms_per_run"],
                   "load_ratio": o["load_first_ms"] / x["load_first_ms"],
                   "rss_ratio": o["peak_rss_mib"] / x["peak_rss_mib"]}
            results["cases"].append(row)
            print(f"| {label} | {thr} | {o['median_ms']:.3f} | {x['median_ms']:.3f} | {row['ratio']:.2f} | "
                  f"{o['p90_ms']:.3f}/{x['p90_ms']:.3f} | {row['cpu_ratio']:.2f} | "
                  f"{o['load_first_ms']:.0f}/{x['load_first_ms']:.0f} ({row['load_ratio']:.2f}) | "
                  f"{o['peak_rss_mib']:.0f}/{x['peak_rss_mib']:.0f} ({row['rss_ratio']:.2f}) |", flush=True)
    results["loadavg_end"] = os.getloadavg()[0]
    os.makedirs(os.path.dirname(os.path.abspath(a.json)), exist_ok=True)
    with open(a.json, "w") as f:
        json.dump(results, f, indent=1)
    print(f"results: {a.json} (load average {results['loadavg_start']:.1f} -> {results['loadavg_end']:.1f})")


if __name__ == "__main__":
    main()

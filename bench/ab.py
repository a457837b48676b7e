"""A/B of two builds of our runtime, with ONNX Runtime as the fixed reference, in one run.

    python bench/ab.py --a PYTHONPATH_A --b PYTHONPATH_B --models DIR [--only m1,m2] [--threads 1,2]

Each of A, B (our runtime from the package found on the given PYTHONPATH, e.g. a folder made with
`pip install --target DIR --no-build-isolation .` at the baseline commit) and ORT runs in its own
worker process (bench/worker.py); batches rotate between the three with a settle pause before
each, as bench.py does, so machine noise and the VM's power states hit all three alike. Prints
medians, B/A and both against ORT. For before/after numbers of a change; a benchmark, never a test.
"""
import argparse
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bench import Worker, run_rotated  # noqa: E402


class EnvWorker(Worker):
    def __init__(self, which, model_dir, prefix, threads, pythonpath):
        env = dict(os.environ)
        if pythonpath:
            env["PYTHONPATH"] = pythonpath
        self.p = subprocess.Popen([sys.executable, os.path.join(HERE, "worker.py"), which, model_dir, prefix,
                                   str(threads)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
        self.ready = self._read()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--a", required=True, help="PYTHONPATH of build A (baseline); '' = the installed package")
    ap.add_argument("--b", required=True, help="PYTHONPATH of build B")
    ap.add_argument("--models", required=True)
    ap.add_argument("--only", required=True, help="comma-separated model folders")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--batch-ms", type=float, default=300.0)
    ap.add_argument("--settle-ms", type=float, default=150.0)
    ap.add_argument("--no-ort", action="store_true")
    a = ap.parse_args()
    print("| model | thr | A ms | B ms | ORT ms | B/A | A/ORT | B/ORT |")
    print("|---|---|---|---|---|---|---|---|")
    for m in a.only.split(","):
        d = os.path.join(a.models, m)
        for thr in [int(t) for t in a.threads.split(",")]:
            w = {"A": EnvWorker("ours", d, "", thr, a.a), "B": EnvWorker("ours", d, "", thr, a.b)}
            if not a.no_ort:
                w["ORT"] = EnvWorker("ort", d, "", thr, "")
            times, _ = run_rotated(w, a.rounds, a.batch_ms, a.settle_ms / 1e3)
            med = {k: float(np.median(v)) for k, v in times.items()}
            for x in w.values():
                x.close()
            o = med.get("ORT", float("nan"))
            print(f"| {m} | {thr} | {med['A']:.3f} | {med['B']:.3f} | {o:.3f} | {med['B'] / med['A']:.2f} | "
                  f"{med['A'] / o:.2f} | {med['B'] / o:.2f} |", flush=True)


if __name__ == "__main__":
    main()

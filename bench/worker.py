"""One runtime in its own process, driven by bench.py over stdin/stdout (one JSON object per line).

    python worker.py ours|ours-bf16|ort MODEL_DIR PREFIX THREADS

("ours-bf16": ours loaded with compute_precision="bf16", the opt-in bfloat16 compute mode.)

Loads the model, runs the first inference (both timed: "load_first_ms"), then answers
{"cmd": "run", "n": K} with K latencies in ms and the process CPU seconds spent, and
{"cmd": "stats"} with the peak RSS (VmHWM) and the outputs' max abs error vs. the reference.
"""
import json
import os
import sys
import time

import numpy as np


def read_inputs(model_dir, prefix, names):
    return [np.load(os.path.join(model_dir, f"{prefix}input_{i}.npy")) for i in range(len(names))]


def peak_rss_mib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0
    return float("nan")


class Ours:
    def __init__(self, path, threads, compute_precision="float32"):
        import optimium.runtime as rt
        self.rt = rt
        # Only a non-default precision is passed, so bench/ab.py can still drive builds older than it.
        extra = {} if compute_precision == "float32" else {"compute_precision": compute_precision}
        self.model = rt.load_model(path, threads=threads, **extra)
        self.request = self.model.create_request()
        self.input_names = [str(n) for n in self.model.input_names]

    def run(self, inputs):
        # run() is the synchronous call (like ORT's sess.run); builds older than it: infer + wait.
        if hasattr(self.request, "run"):
            self.request.run(inputs)
        else:
            self.request.infer(inputs)
            self.request.wait()

    def outputs(self):
        names = [str(n) for n in self.model.output_names]
        return [self.request.get_output(n).to_numpy() for n in names]


class Ort:
    def __init__(self, path, threads):
        import onnxruntime as ort
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        self.sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
        self.input_names = [i.name for i in self.sess.get_inputs()]
        self.last = None

    def run(self, inputs):
        self.last = self.sess.run(None, dict(zip(self.input_names, inputs)))

    def outputs(self):
        return self.last


def main():
    which, model_dir, prefix, threads = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    path = os.path.join(model_dir, "model.onnx")
    t0 = time.perf_counter()
    if which == "ort":
        rt = Ort(path, threads)
    else:
        rt = Ours(path, threads, "bf16" if which == "ours-bf16" else "float32")
    inputs = read_inputs(model_dir, prefix, rt.input_names)
    rt.run(inputs)
    load_first_ms = (time.perf_counter() - t0) * 1e3
    print(json.dumps({"ready": True, "load_first_ms": load_first_ms}), flush=True)
    for line in sys.stdin:
        cmd = json.loads(line)
        if cmd["cmd"] == "run":
            times = []
            c0 = time.process_time()
            for _ in range(cmd["n"]):
                s = time.perf_counter()
                rt.run(inputs)
                times.append((time.perf_counter() - s) * 1e3)
            print(json.dumps({"times_ms": times, "cpu_s": time.process_time() - c0}), flush=True)
        elif cmd["cmd"] == "stats":
            err = None
            outs = rt.outputs()
            ref = os.path.join(model_dir, f"{prefix}output_0.npy")
            if os.path.exists(ref):
                err = float(np.max(np.abs(outs[0].astype(np.float64) - np.load(ref).astype(np.float64))))
            print(json.dumps({"peak_rss_mib": peak_rss_mib(), "max_abs_err": err}), flush=True)
        elif cmd["cmd"] == "quit":
            break


if __name__ == "__main__":
    main()

"""Per-op comparison with ONNX Runtime on one model: our profiler's per-op minimum (optimium-benchmark
--json, its profiled pass) beside ORT's per-node minimum (its own profiler, kernel_time events), joined
by node name. Whole runs are compared unprofiled: optimium-benchmark's latency_ms (its measured runs
are not profiled) against ORT's sess.run without its profiler.
Our fused ops carry the names of the nodes they replaced ("a+b+c"); ORT's fused or renamed nodes
(Conv+Relu, NCHWc reorders) are matched by the original name they start with, the rest listed as
ORT-only. A diagnostic, never a test: run it on a quiet machine.

    python bench/op_compare.py MODEL.onnx [--threads 1] [--runs 30] [--rounds 3] [--benchmark build/optimium-benchmark]

Ours and ORT run in alternating blocks (--rounds, the runs split over them; ours a fresh
optimium-benchmark process per block, ORT's two sessions kept): per-op figures are minima over
all blocks, our whole-run median the median of the blocks' medians.
"""
import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np


def ours(benchmark, model, threads, runs):
    out = subprocess.run([benchmark, model, f"--threads={threads}", f"--runs={runs}", "--warmup=5", "--json"],
                         check=True, capture_output=True, text=True).stdout
    d = json.loads(out)
    # profiled_latency_ms: absent from optimium-benchmark builds before it reported unprofiled latency.
    return d["latency_ms"], d.get("profiled_latency_ms"), [(o["name"], o["type"], o["min_us"]) for o in d["ops"]]


class Ort:
    """ORT's per-node minima (its profiler) and model_run times, and the sess.run times of a second
    session without the profiler, run in blocks after the profiled one's: ORT's profiler adds to its
    node and run times (MNIST CNN 0.080 -> 0.123 ms, MobileNetV2 9.5 -> 9.8 ms, 1 thread, Zen 3), so
    its node minima overstate what its unprofiled run spends in them; ours are not inflated that way.
    Both sessions live across the rounds (run() per round, finish() once)."""

    def __init__(self, model, threads):
        import onnxruntime as ort_mod

        def session(profile):
            so = ort_mod.SessionOptions()
            so.intra_op_num_threads = threads
            so.inter_op_num_threads = 1
            if profile:
                so.enable_profiling = True
                so.profile_file_prefix = os.path.join(tempfile.mkdtemp(), "ort")
            return ort_mod.InferenceSession(model, so, providers=["CPUExecutionProvider"])

        self.s, self.plain = session(True), session(False)
        rng = np.random.default_rng(1)
        self.feeds = {}
        for i in self.s.get_inputs():
            shape = [d if isinstance(d, int) else 1 for d in i.shape]
            dt = {"tensor(float)": np.float32, "tensor(int64)": np.int64, "tensor(int32)": np.int32}.get(i.type, np.float32)
            self.feeds[i.name] = (rng.standard_normal(shape) if dt == np.float32 else np.ones(shape)).astype(dt)
        self.plain_ms = []
        self.measured = []  # per profiled run: True when measured (after a round's warm-up)

    def run(self, runs, warmup=5):
        # The profiled session's block, then the plain one's: run by run alternation had the idle
        # session's spinning intra-op workers compete with the running one's at 2 threads (ORT's
        # sess.run median 10.2 ms vs 5.4 in bench.py on SqueezeNet); the warm-up absorbs the spin.
        for k in range(warmup + runs):
            self.s.run(None, self.feeds)
            self.measured.append(k >= warmup)
        for k in range(warmup + runs):
            t0 = time.perf_counter()
            self.plain.run(None, self.feeds)
            if k >= warmup:
                self.plain_ms.append((time.perf_counter() - t0) * 1e3)

    def finish(self):
        """(profiled model_run ms, unprofiled sess.run ms, {(node, op): min us}) of the measured runs."""
        path = self.s.end_profiling()
        per = collections.defaultdict(list)
        runs_ms = []
        run_index = -1
        for e in json.load(open(path)):
            if e.get("cat") == "Session" and e["name"] == "model_run":
                run_index += 1
                if self.measured[run_index]:
                    runs_ms.append(e["dur"] / 1000.0)
            elif e.get("cat") == "Node" and e["name"].endswith("_kernel_time"):
                per[(e["name"][: -len("_kernel_time")], e["args"].get("op_name", "?"))].append(e["dur"])
        # Node events carry no run index: each node's minimum over every run but the very first
        # (later rounds' warm-up runs are as warm as measured ones).
        return runs_ms, self.plain_ms, {k: min(v[1:] or v) for k, v in per.items()}


def graph_producers(model):
    """Tensor name -> (producing node's name, its inputs), for ORT's fused nodes named after a tensor."""
    try:
        import onnx
    except ImportError:
        return {}
    g = onnx.load(model, load_external_data=False).graph
    return {o: (n.name, [i for i in n.input if i]) for n in g.node for o in n.output}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--benchmark", default=os.path.join(os.path.dirname(__file__), "..", "build", "optimium-benchmark"))
    ap.add_argument("--rounds", type=int, default=3,
                    help="alternate ours and ORT this many times (--runs split over them): on a VM whose speed "
                         "shifts between processes, one block each compares two machine states")
    a = ap.parse_args()
    rounds = max(1, a.rounds)
    per_round = max(1, a.runs // rounds)
    ort_side = Ort(a.model, a.threads)
    lats, lats_profiled, mins = [], [], {}
    for r in range(rounds):
        for side in (("ours", "ort") if r % 2 == 0 else ("ort", "ours")):
            if side == "ort":
                ort_side.run(per_round)
                continue
            lat, lat_profiled, mine = ours(a.benchmark, a.model, a.threads, per_round)
            lats.append(lat)
            lats_profiled.append(lat_profiled)
            for name, typ, us in mine:
                mins[(name, typ)] = min(us, mins.get((name, typ), us))
    mine = [(name, typ, us) for (name, typ), us in mins.items()]
    merge = lambda ls: None if ls[0] is None else {"min": min(l["min"] for l in ls),
                                                   "median": float(np.median([l["median"] for l in ls]))}
    lat, lat_profiled = merge(lats), merge(lats_profiled)
    ort_runs, ort_plain, theirs = ort_side.finish()
    left = dict(theirs)
    rows = [[name, typ, us, 0.0, set()] for name, typ, us in mine]

    def take(i, k):
        rows[i][3] += left.pop(k)
        rows[i][4].add(k[1])

    # 1. exact names (and ORT's suffixed copies of them)
    for i, (name, _, _) in enumerate(mine):
        for p in name.split("+"):
            for k in [k for k in left if k[0] == p or k[0].startswith(p + "_")]:
                take(i, k)
    # 2. ORT's fused nodes are named after a tensor of the model ("/blk/relu_1/Relu_output_0_nchwc":
    # the output of the Relu fused into the Conv before it): walk the graph back from the tensor's
    # producer, through the activations and Adds fused into it, to a node of ours.
    ours_index = {p: i for i, (name, _, _) in enumerate(mine) for p in name.split("+")}
    producer = graph_producers(a.model)
    for k in list(left):
        n = k[0]
        for suffix in ("_nchwc",):
            if n.endswith(suffix):
                n = n[: -len(suffix)]
        node, seen = producer.get(n), 0
        while node is not None and node[0] not in ours_index and seen < 4:
            node, seen = producer.get(node[1][0]) if node[1] else None, seen + 1
        if node is not None and node[0] in ours_index:
            take(ours_index[node[0]], k)
    # 3. The rest of ORT's fused nodes named after the activation's output:
    # the first node (in our order) of the same module that has no such node yet.
    fused = set()
    for k in sorted(left, key=lambda k: k[0]):
        n = k[0]
        for suffix in ("_output_0_nchwc", "_output_0"):
            if n.endswith(suffix):
                n = n[: -len(suffix)]
        mod = os.path.dirname(os.path.dirname(n))
        hit = next(((i, j) for i, (name, _, _) in enumerate(mine) for j, p in enumerate(name.split("+"))
                    if (i, j) not in fused and os.path.dirname(os.path.dirname(p)) == mod), None)
        if hit:
            fused.add(hit)
            take(hit[0], k)
    rows = [(r[0], r[1], r[2], r[3], ",".join(sorted(r[4]))) for r in rows]
    if lat_profiled is None:  # an optimium-benchmark from before: its latency_ms is of profiled runs
        lat, lat_profiled = None, lat
    ours_plain = f"ours median {lat['median']:.3f} ms min {lat['min']:.3f}" if lat else "ours: not reported"
    ratio = f" | ratio of medians {lat['median'] / np.median(ort_plain):.2f}" if lat else ""
    print(f"whole runs, unprofiled (threads {a.threads}): {ours_plain} | ORT (sess.run, unprofiled "
          f"session) median {np.median(ort_plain):.3f} ms min {min(ort_plain):.3f}{ratio}")
    print(f"profiled runs, behind the per-op figures: ours median {lat_profiled['median']:.3f} ms min "
          f"{lat_profiled['min']:.3f} | ORT model_run median {np.median(ort_runs):.3f} ms min {min(ort_runs):.3f}")
    print(f"{'op':60s} {'ours type':34s} {'ours us':>9s} {'ORT us':>9s} {'ratio':>6s}  ORT ops")
    for name, typ, us, t, ops in sorted(rows, key=lambda r: -r[2]):
        short = name if len(name) <= 60 else "..." + name[-57:]
        print(f"{short:60s} {typ[-34:]:34s} {us:9.1f} {t:9.1f} {us / t if t else float('nan'):6.2f}  {ops}")
    print(f"sum of op minima: ours {sum(r[2] for r in rows) / 1000:.3f} ms, ORT {sum(theirs.values()) / 1000:.3f} ms")
    by_type = collections.defaultdict(lambda: [0.0, 0.0])
    for _, typ, us in mine:
        by_type[typ.split(".")[-1]][0] += us / 1000
    for (_, op), t in theirs.items():
        by_type[op][1] += t / 1000
    print("by op type (ms): " + ", ".join(f"{k} {v[0]:.2f}/{v[1]:.2f}" for k, v in sorted(by_type.items(), key=lambda kv: -kv[1][0])))
    if left:
        print("ORT-only nodes (reorders, nodes we folded):")
        for (n, op), t in sorted(left.items(), key=lambda kv: -kv[1])[:20]:
            print(f"  {n[-60:]:60s} {op:20s} {t:9.1f}")


if __name__ == "__main__":
    sys.exit(main())

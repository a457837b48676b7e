"""What a model group saves when models alternate (issue 18): N models run in turn (A, B, C, A, B,
C, ...), loaded either as N separate models (N pools) or as the N members of one group (one pool),
each configuration in a fresh worker process. A benchmark, never a test: nothing here asserts.

Per configuration it reports, for every model:
  * the median wall time of a run right after another model ran (alternating) and of a run right
    after itself (back to back): their difference is the per-switch penalty;
  * for group members, the runtime profiler's ModelExecute time of the alternating runs
    (GroupMember set_profiling / get_profile_durations), so wall - execute is what the group's turn
    and the hand-over cost;
and for the whole process: CPU time per alternation round (getrusage), threads, and peak RSS
(sampled from outside with optimium.runtime.profiling.ResourceSampler).

    .venv-py/bin/python bench/group_alternation.py MODEL[:DIMS] MODEL[:DIMS] ... [--threads 2] [--rounds 300]

DIMS overrides the first input's shape (e.g. 1x3x48x320 for a dynamic OCR recognizer); other inputs
get the random-input rule's shapes (symbolic dims 1).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

CONFIGS = [
    # (label, group?, spin_iterations)
    ("separate, spin 1000 (default)", False, 1000),
    ("separate, spin -1", False, -1),
    ("group, spin 1000 (default)", True, 1000),
    ("group, spin -1", True, -1),
]


def _inputs(infos, dims_override, seed):
    from optimium.runtime._random_inputs import concrete_dims, random_array
    rng = np.random.default_rng(seed)
    out = []
    for i, info in enumerate(infos):
        shape = dims_override if (i == 0 and dims_override) else concrete_dims(info.shape)
        out.append(random_array(info.type.to_dtype(), shape, rng, info.type.name))
    return out


def _threads():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("Threads:"):
                return int(line.split()[1])
    return -1


def worker(args):
    import resource

    import optimium.runtime as rt
    specs = [json.loads(s) for s in args.spec]
    runs = []
    if args.group:
        group = rt.create_model_group(spin_iterations=args.spin)
        members = [group.add(s["path"], threads=args.threads) for s in specs]
        infos = [[m.get_input_tensor(i) for i in range(len(m.input_names))] for m in members]
        for m in members:
            runs.append(m.run)
    else:
        models = [rt.load_model(s["path"], threads=args.threads, spin_iterations=args.spin) for s in specs]
        infos = [[m.get_input_tensor(i) for i in range(len(m.input_names))] for m in models]
        requests = [m.create_request() for m in models]

        def make(r):
            def run(inputs):
                r.infer(inputs)
                r.wait()
            return run
        runs = [make(r) for r in requests]
    inputs = [_inputs(infos[i], specs[i]["dims"], i) for i in range(len(specs))]
    for _ in range(3):  # warm-up: plans, arenas, packed weights
        for run, x in zip(runs, inputs):
            run(x)
    # Back to back: each model alone.
    solo = []
    for run, x in zip(runs, inputs):
        t = []
        for _ in range(args.rounds // 3 + 5):
            t0 = time.perf_counter()
            run(x)
            t.append(time.perf_counter() - t0)
        solo.append(statistics.median(t) * 1e3)
    # Alternating, with a gap between runs as a pipeline has (pre/post-processing on the caller).
    def alternate(rounds):
        alt = [[] for _ in runs]
        for _ in range(rounds):
            for k, (run, x) in enumerate(zip(runs, inputs)):
                if args.gap_us:
                    end = time.perf_counter() + args.gap_us * 1e-6
                    while time.perf_counter() < end:  # the caller's own work between stages
                        pass
                t0 = time.perf_counter()
                run(x)
                alt[k].append(time.perf_counter() - t0)
        return alt

    ru0 = resource.getrusage(resource.RUSAGE_SELF)
    w0 = time.perf_counter()
    alt = alternate(args.rounds)
    wall = time.perf_counter() - w0
    ru1 = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)
    peak_rss_mb = ru1.ru_maxrss / 1024  # before the profiled pass (its event buffers are not the runtime's)
    threads = _threads()
    execute = []
    if args.group:  # a second, profiled pass: the members' ModelExecute times while alternating
        for m in members:
            m.set_profiling(True, event_buffer_size=1 << 20)
        profiled = alternate(min(args.rounds, 100))
        for m, a in zip(members, profiled):
            d = m.get_profile_durations().model_durations
            execute.append((statistics.median(d) / 1e6 if d else float("nan"), statistics.median(a) * 1e3))
    print(json.dumps({
        "solo_ms": solo,
        "alt_ms": [statistics.median(a) * 1e3 for a in alt],
        "execute_ms": execute,
        "cpu_ms_per_round": cpu / args.rounds * 1e3,
        "wall_ms_per_round": wall / args.rounds * 1e3,
        "threads": threads,
        "peak_rss_mb": peak_rss_mb,
    }), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("models", nargs="*")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=300)
    ap.add_argument("--gap-us", type=int, default=200, help="caller work between stages (busy wait, us)")
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--group", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--spin", type=int, default=1000, help=argparse.SUPPRESS)
    ap.add_argument("--spec", action="append", default=[], help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker(args)
    if len(args.models) < 2:
        ap.error("give at least two models")
    specs = []
    for m in args.models:
        path, _, dims = m.partition(":")
        specs.append({"path": path, "dims": [int(d) for d in dims.split("x")] if dims else None})
    from optimium.runtime.profiling import ResourceSampler
    results = {}
    for label, group, spin in CONFIGS:
        cmd = [sys.executable, os.path.abspath(__file__), "--worker", "--threads", str(args.threads), "--rounds",
               str(args.rounds), "--gap-us", str(args.gap_us), "--spin", str(spin)]
        cmd += ["--group"] if group else []
        for s in specs:
            cmd += ["--spec", json.dumps(s)]
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
        with ResourceSampler(p.pid, interval=0.01) as sampler:
            out, _ = p.communicate()
        if p.returncode != 0:
            raise SystemExit(f"{label}: worker failed ({p.returncode})")
        r = json.loads(out.strip().splitlines()[-1])
        r["sampled_peak_rss_mb"] = sampler.peak_rss / 2**20
        r["sampled_avg_cpu_percent"] = sampler.avg_cpu_percent
        results[label] = r
        time.sleep(0.2)
    names = [os.path.basename(s["path"].rstrip("/")) for s in specs]
    print(f"models: {', '.join(names)}; {args.threads} threads; {args.rounds} rounds; "
          f"{args.gap_us} us of caller work between stages\n")
    print("| configuration | " + " | ".join(f"{n} alternating / back-to-back ms" for n in names) +
          " | switch penalty ms per round | CPU ms per round | wall ms per round | threads | peak RSS MB |")
    print("|---|" + "---|" * (len(names) + 5))
    for label, r in results.items():
        cells = [f"{a:.3f} / {s:.3f}" for a, s in zip(r["alt_ms"], r["solo_ms"])]
        penalty = sum(a - s for a, s in zip(r["alt_ms"], r["solo_ms"]))
        print(f"| {label} | " + " | ".join(cells) + f" | {penalty:.3f}" +
              f" | {r['cpu_ms_per_round']:.3f} | {r['wall_ms_per_round']:.3f} | {r['threads']} | "
              f"{r['peak_rss_mb']:.1f} |")
    for label, r in results.items():
        if r["execute_ms"]:
            print(f"\n{label}, profiled pass: ModelExecute median ms per member (wall of run()): " +
                  ", ".join(f"{n} {e:.3f} ({a:.3f})" for n, (e, a) in zip(names, r["execute_ms"])))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"models": names, "threads": args.threads, "rounds": args.rounds, "results": results}, f,
                      indent=2)


if __name__ == "__main__":
    sys.exit(main())

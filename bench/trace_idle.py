"""Idle time inside ops, from a Chrome trace written by `optimium-benchmark --trace=FILE`.

    python bench/trace_idle.py TRACE.json [--threads N] [--top 15]

For every op run (a 'layer' event on the request's thread) the busy time is the sum of the
'range' events inside it: one per thread and parallel-for, from the thread's first chunk to the end
of its last (the chunks a thread runs in one parallel-for follow each other without a gap); an op
with no range event ran on one thread and counts as busy for its whole span. 'ranges/run' counts
these spans. idle = threads x wall - busy: the capacity a
fan-out left unused (waiting for a straggler, wake-up latency, a chunk too small to split).
Prints totals per run and the ops that leave the most idle time. Per op the median run is used
(wall and busy of the run with the median wall), so a vCPU the hypervisor takes away for a few
milliseconds in one run does not swamp the table. A measurement, not a test.
"""
import argparse
import collections
import json


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--top", type=int, default=15)
    a = ap.parse_args()
    d = json.load(open(a.trace))
    ev = d["traceEvents"] if isinstance(d, dict) else d
    layers = [e for e in ev if e.get("cat") == "layer"]
    ranges = collections.defaultdict(list)  # op index -> [(ts, dur)]
    for e in ev:
        if e.get("cat") == "device" and "op" in e.get("args", {}):
            ranges[e["args"]["op"]].append((e["ts"], e["dur"]))
    for v in ranges.values():
        v.sort()
    runs = sum(1 for e in ev if e.get("cat") == "model" and e.get("ph") in ("b", "B")) or 1
    per_op = collections.defaultdict(lambda: [0.0, 0.0, 0, 0, ""])  # wall, busy, count, ranges, type
    import bisect
    samples = collections.defaultdict(list)
    for L in layers:
        op = L["args"]["op"]
        t0, t1 = L["ts"], L["ts"] + L["dur"]
        rs = ranges.get(op, [])
        i = bisect.bisect_left(rs, (t0, -1.0))
        busy, n = 0.0, 0
        while i < len(rs) and rs[i][0] <= t1:
            busy += rs[i][1]
            n += 1
            i += 1
        if n == 0:
            busy = L["dur"] * 1.0  # one thread, whole span
        # One thread runs the op's own code around the fan-out; count it busy outside ranges too.
        samples[L["name"]].append((L["dur"], busy, n, L["args"].get("type", "")))
    for name, ss in samples.items():
        ss.sort()
        w, b, n, t = ss[len(ss) // 2]
        per_op[name] = [w * runs, b * runs, len(ss), n * runs, t]
    wall = sum(r[0] for r in per_op.values())
    busy = sum(r[1] for r in per_op.values())
    cap = a.threads * wall
    print(f"runs {runs}: op wall {wall / runs / 1000:.3f} ms/run, busy {busy / runs / 1000:.3f} ms/run, "
          f"idle {(cap - busy) / runs / 1000:.3f} ms/run ({100 * (cap - busy) / max(cap, 1e-9):.1f}% of "
          f"{a.threads} threads x op wall)")
    by_type = collections.defaultdict(lambda: [0.0, 0.0, 0])
    for r in per_op.values():
        t = by_type[r[4]]
        t[0] += r[0]
        t[1] += r[1]
        t[2] += r[3]
    print("\nby op type: wall ms/run, busy ms/run, idle ms/run, ranges/run")
    for k, t in sorted(by_type.items(), key=lambda kv: -(a.threads * kv[1][0] - kv[1][1])):
        print(f"  {k:28s} {t[0] / runs / 1000:8.3f} {t[1] / runs / 1000:8.3f} "
              f"{(a.threads * t[0] - t[1]) / runs / 1000:8.3f} {t[2] / runs:8.1f}")
    print(f"\ntop {a.top} ops by idle: wall us/run, busy us/run, idle us/run, ranges/run")
    for name, r in sorted(per_op.items(), key=lambda kv: -(a.threads * kv[1][0] - kv[1][1]))[:a.top]:
        print(f"  {name[-48:]:48s} {r[4]:20s} {r[0] / runs:8.1f} {r[1] / runs:8.1f} "
              f"{(a.threads * r[0] - r[1]) / runs:8.1f} {r[3] / runs:6.1f}")


if __name__ == "__main__":
    main()

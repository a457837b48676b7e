"""How each fan-out splits, from a Chrome trace written by `optimium-benchmark --trace=FILE`.

    python bench/trace_joins.py TRACE.json [--top 15]

Per op that ran ranges on two or more threads (medians over the runs, us): wall; join (the first
range of another thread after the op began: the kernel's set-up plus the pool's hand-off); the
caller's wait after its own last range; busy time of the op's own thread and of the others; range
counts (the trace has one range per thread and parallel-for: the thread's chunks, first to last). Sorted by the caller's wait; the last line sums the medians. Complements trace_idle.py. A
measurement, not a test.
"""
import argparse
import bisect
import collections
import json
import statistics


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("--top", type=int, default=15)
    a = ap.parse_args()
    with open(a.trace) as f:
        d = json.load(f)
    ev = d["traceEvents"] if isinstance(d, dict) else d
    ranges = collections.defaultdict(list)
    for e in ev:
        if e.get("cat") == "device" and "op" in e.get("args", {}):
            ranges[e["args"]["op"]].append((e["ts"], e["dur"], e["tid"]))
    for v in ranges.values():
        v.sort()
    per_op = collections.defaultdict(list)
    for L in ev:
        if L.get("cat") != "layer":
            continue
        t0, t1, tid = L["ts"], L["ts"] + L["dur"], L["tid"]
        rs = ranges.get(L["args"]["op"], [])
        i = bisect.bisect_left(rs, (t0, -1.0, -1))
        mine, other = [], []
        while i < len(rs) and rs[i][0] <= t1:
            (mine if rs[i][2] == tid else other).append(rs[i])
            i += 1
        if not mine or not other:
            continue
        caller_end = max(s + d for s, d, _ in mine)
        per_op[L["name"]].append((L["dur"], other[0][0] - t0, t1 - caller_end, sum(d for _, d, _ in mine),
                                  sum(d for _, d, _ in other), len(mine), len(other)))
    rows = []
    for name, v in per_op.items():
        rows.append((name, [statistics.median(x[k] for x in v) for k in range(7)]))
    rows.sort(key=lambda r: -r[1][2])
    print(f"{'op':50s} {'wall':>7s} {'join':>6s} {'wait':>6s} {'caller':>7s} {'others':>7s} ranges")
    for name, m in rows[:a.top]:
        print(f"{name[-50:]:50s} {m[0]:7.1f} {m[1]:6.1f} {m[2]:6.1f} {m[3]:7.1f} {m[4]:7.1f} {m[5]:.0f}+{m[6]:.0f}")
    tot = [sum(m[k] for _, m in rows) for k in range(5)]
    print(f"{'sum over ' + str(len(rows)) + ' ops':50s} " + " ".join(f"{x:7.1f}" for x in tot))


if __name__ == "__main__":
    main()

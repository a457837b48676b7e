#!/usr/bin/env python3
"""Throughput of the OIP (KServe V2 REST) endpoint on loopback: requests/s and latency percentiles
with N concurrent clients, each a process with one keep-alive connection (http.client), sending
the digits model's input as JSON or as binary (Triton's binary tensor extension); side by side, the
same clients over the native protocol (optimium.runtime rt.connect: infer + wait + get_output) of
the same server process.

    .venv-py/bin/python bench/oip_throughput.py [--server BIN] [--clients 1 2 4 8] [--seconds 5]

Starts the server itself (default: build/src/remote/optimium-remote-server when it takes
--http-port, else build/src/remote/oip/optimium-oip-server) on an ephemeral port. Clients and
server share the machine's cores, so on a small machine the numbers include the clients' own
cost; the in-process row (optimium.runtime, no HTTP) is the ceiling for the same model."""
import argparse
import http.client
import json
import multiprocessing
import os
import pathlib
import struct
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]


def default_server():
    for b in (ROOT / "build/src/remote/optimium-remote-server", ROOT / "build/src/remote/oip/optimium-oip-server"):
        if b.exists() and "--http-port" in subprocess.run([str(b), "--help"], capture_output=True, text=True).stdout:
            return b
    sys.exit("no server binary with --http-port under build/ (build first or pass --server)")


def make_body(binary):
    pixels = [((i * 37) % 17) / 16.0 for i in range(64)]
    if not binary:
        return json.dumps({"inputs": [{"name": "image", "datatype": "FP32", "shape": [1, 1, 8, 8], "data": pixels}]}).encode(), {}
    header = json.dumps({"inputs": [{"name": "image", "datatype": "FP32", "shape": [1, 1, 8, 8],
                                     "parameters": {"binary_data_size": 256}}],
                         "outputs": [{"name": "probabilities", "parameters": {"binary_data": True}}]}).encode()
    return header + struct.pack("<64f", *pixels), {"Inference-Header-Content-Length": str(len(header)),
                                                   "Content-Type": "application/octet-stream"}


def client(port, binary, start_at, stop_at, queue):
    body, headers = make_body(binary)
    conn = http.client.HTTPConnection("127.0.0.1", port)
    latencies = []
    while time.time() < start_at:
        time.sleep(0.001)
    while True:
        t0 = time.perf_counter()
        if time.time() >= stop_at:
            break
        conn.request("POST", "/v2/models/digits/infer", body, headers)
        response = conn.getresponse()
        data = response.read()
        if response.status != 200:
            raise RuntimeError(data)
        latencies.append(time.perf_counter() - t0)
    conn.close()
    queue.put(latencies)


def native_client(port, _binary, start_at, stop_at, queue):
    import numpy as np
    import optimium.runtime as rt

    session = rt.connect("127.0.0.1", port=port)
    model = session.load_model("digits", threads=1)
    x = np.array([((i * 37) % 17) / 16.0 for i in range(64)], np.float32).reshape(1, 1, 8, 8)
    latencies = []
    while time.time() < start_at:
        time.sleep(0.001)
    while True:
        t0 = time.perf_counter()
        if time.time() >= stop_at:
            break
        model.infer([x])
        model.wait()
        model.get_output(0).to_numpy()
        latencies.append(time.perf_counter() - t0)
    session.close()
    queue.put(latencies)


def run(port, clients, binary, seconds, target=client):
    queue = multiprocessing.Queue()
    start_at = time.time() + 1.0
    procs = [multiprocessing.Process(target=target, args=(port, binary, start_at, start_at + seconds, queue))
             for _ in range(clients)]
    for p in procs:
        p.start()
    latencies = []
    for _ in procs:
        latencies += queue.get()
    for p in procs:
        p.join()
    latencies.sort()
    pct = lambda q: latencies[min(len(latencies) - 1, int(q * len(latencies)))] * 1e3
    return len(latencies) / seconds, pct(0.5), pct(0.99)


def in_process(seconds):
    import numpy as np
    import optimium.runtime as rt

    model = rt.load_model(str(ROOT / "models/digits"), threads=1)
    request = model.create_request()
    x = np.zeros((1, 1, 8, 8), np.float32)
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        request.infer([x])
        request.wait()
        request.get_output(0).to_numpy()
        n += 1
    return n / (time.perf_counter() - t0)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--server", type=pathlib.Path, default=None)
    ap.add_argument("--clients", type=int, nargs="+", default=[1, 2, 4, 8])
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--workers", type=int, default=0, help="--http-workers of the server (0 = its default)")
    args = ap.parse_args()
    server = args.server or default_server()
    cmd = [str(server), "--host", "127.0.0.1", "--http-port", "0", "--workspace", str(ROOT / "models"),
           "--model", "digits=digits", "--model-threads", "1"]
    if "remote-server" in server.name:
        cmd += ["--port", "0"]
    if args.workers:
        cmd += ["--http-workers", str(args.workers)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)  # its log: per session
    try:
        port = native_port = None
        for line in proc.stdout:
            if line.startswith("oip listening on "):
                port = int(line.strip().rsplit(":", 1)[1])
            elif line.startswith("listening on "):
                native_port = int(line.strip().rsplit(":", 1)[1])
            if port is not None and (native_port is not None or "remote-server" not in server.name):
                break
        if port is None:
            sys.exit("server did not start")
        print(f"server: {server.name}, cpu: {os.cpu_count()} cores, {args.seconds:g} s per row, model: digits (8x8 MLP)")
        print(f"{'encoding':8} {'clients':>7} {'req/s':>9} {'p50 ms':>8} {'p99 ms':>8}")
        for binary in (True, False):
            for n in args.clients:
                rps, p50, p99 = run(port, n, binary, args.seconds)
                print(f"{'binary' if binary else 'json':8} {n:>7} {rps:>9.0f} {p50:>8.3f} {p99:>8.3f}", flush=True)
        if native_port is not None:
            for n in args.clients:
                rps, p50, p99 = run(native_port, n, True, args.seconds, native_client)
                print(f"{'native':8} {n:>7} {rps:>9.0f} {p50:>8.3f} {p99:>8.3f}   (the native protocol, same server)",
                      flush=True)
        try:
            print(f"{'local':8} {1:>7} {in_process(args.seconds):>9.0f}   (optimium.runtime in-process, no HTTP)")
        except ImportError:
            pass
    finally:
        proc.terminate()
        proc.wait(timeout=30)


if __name__ == "__main__":
    main()

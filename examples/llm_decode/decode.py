"""Greedy decoding with the GPT-style decoder, side by side:

* ours: the KV cache lives in the request (past_* Preserved + Resizable, updated from present_*
  after every run; gpt2_tiny_decoder.optimium.json), each step feeds only input_ids;
* ONNX Runtime: past_* fed from the host and present_* returned to it every step (the usual way).

    .venv-py/bin/python examples/llm_decode/decode.py build/exported-models/gpt2_tiny_decoder \\
        --tokens 32 --past 128 1024 --threads 1

Both start from the same random prompt cache of P positions and the same first token; the tokens
must be identical. Prints the median ms per step and the bytes copied per step: ours from the
profiler's Copy events (one extra profiled step), ONNX Runtime's as the present_* bytes that come
back to the host and go in again as past_*.
"""
import argparse
import os
import shutil
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
HEADS, HEAD_DIM = 8, 64


def marked_copy(model_dir, manifest):
    out = model_dir.rstrip("/") + "-kvcache"
    os.makedirs(out, exist_ok=True)
    for name in os.listdir(model_dir):
        if name == "optimium.json":
            continue
        dst = os.path.join(out, name)
        if os.path.lexists(dst):
            os.unlink(dst)
        os.symlink(os.path.join(os.path.abspath(model_dir), name), dst)
    shutil.copyfile(manifest, os.path.join(out, "optimium.json"))
    return out


def decode_ours(model_dir, manifest, prompt, tokens, threads, first):
    import optimium.runtime as rt
    past = next(iter(prompt.values())).shape[2]
    caps = {n: (1, HEADS, past + tokens + 1, HEAD_DIM) for n in prompt}
    model = rt.load_model(marked_copy(model_dir, manifest), threads=threads, resizable_capacities=caps)
    req = model.create_request()
    for n, a in prompt.items():
        req.set_tensor_shape(n, a.shape)
    req.apply_shape_changes()
    for n, a in prompt.items():
        rt.tensor(a).copy_to(req.get_tensor(n))
    out, ms, tok = [], [], first
    for _ in range(tokens):
        ids = np.array([[tok]], dtype=np.int64)
        t0 = time.perf_counter()
        req.infer([ids])
        req.wait()
        ms.append((time.perf_counter() - t0) * 1e3)
        tok = int(np.argmax(req.get_output("logits").to_numpy()))
        out.append(tok)
    req.profile([np.array([[tok]], dtype=np.int64)], repeat=1, warmup=0)
    tensors = dict(enumerate(model.tensors))  # a Copy event's tensor_id indexes the model's tensors
    copies = [e for e in req.get_profile_events() if e.kind == rt.ProfileEventKind.COPY_BEGIN]
    copied = 0
    for e in copies:
        t = tensors.get(e.tensor_id)
        if t is not None and not t.shape.dynamic:
            copied += t.size
    return out, ms, len(copies), copied


def decode_ort(model_dir, prompt, tokens, threads, first):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    sess = ort.InferenceSession(os.path.join(model_dir, "model.onnx"), so, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    feed = dict(prompt)
    out, ms, tok, moved = [], [], first, 0
    for _ in range(tokens):
        feed["input_ids"] = np.array([[tok]], dtype=np.int64)
        t0 = time.perf_counter()
        res = dict(zip(names, sess.run(None, feed)))
        for n in prompt:
            feed[n] = res["present_" + n[len("past_"):]]
        ms.append((time.perf_counter() - t0) * 1e3)
        moved = sum(res["present_" + n[len("past_"):]].nbytes for n in prompt)
        tok = int(np.argmax(res["logits"]))
        out.append(tok)
    return out, ms, moved


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model_dir", help="<exported>/gpt2_tiny_decoder (scripts/export-models.sh)")
    ap.add_argument("--tokens", type=int, default=32)
    ap.add_argument("--past", type=int, nargs="+", default=[128, 1024])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--manifest", default=os.path.join(HERE, "gpt2_tiny_decoder.optimium.json"))
    ap.add_argument("--no-ort", action="store_true", help="skip ONNX Runtime")
    a = ap.parse_args()
    rng = np.random.default_rng(1234)
    print("| past | runtime | median ms/step | bytes copied per step |")
    print("|---:|---|---:|---:|")
    for past in a.past:
        prompt = {f"past_{kv}_{i}": rng.standard_normal((1, HEADS, past, HEAD_DIM), dtype=np.float32)
                  for i in range(6) for kv in ("key", "value")}
        ours, ms, n_copies, copied = decode_ours(a.model_dir, a.manifest, prompt, a.tokens, a.threads, 1)
        print(f"| {past} | ours, cache in the request | {np.median(ms):.2f} | {copied:,} ({n_copies} copy events) |",
              flush=True)
        if not a.no_ort:
            theirs, ms2, moved = decode_ort(a.model_dir, prompt, a.tokens, a.threads, 1)
            print(f"| {past} | ONNX Runtime, past/present fed from the host | {np.median(ms2):.2f} | {moved:,} |",
                  flush=True)
            if theirs != ours:
                raise SystemExit(f"tokens differ at past {past}: ours {ours} vs ONNX Runtime {theirs}")
    print("tokens identical" if not a.no_ort else "done")


if __name__ == "__main__":
    main()

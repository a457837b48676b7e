"""Accuracy of the opt-in bfloat16 compute mode (compute_precision="bf16") on exported models,
against PyTorch's float32 outputs (output_i.npy beside each model) and against our float32 run.

Per model: the max abs error of every output, relative to that output's max |reference|, for ours
float32 and ours bf16; for image classifiers also top-1 agreement of bf16 with float32 over
--variants inputs derived from input_0.npy (flips, shifts, contrast changes: the export has one
image), and with PyTorch on input_0. Prints a Markdown table (docs/optimizations.md carries it).

    PYTHONPATH=<our package> python bench/bf16_accuracy.py --models build/exported-models \\
        [--only resnet18,mobilenet_v2,bert_mini] [--variants 16]
"""
import argparse
import os

import numpy as np


def inputs_of(d, n):
    return [np.load(os.path.join(d, f"input_{i}.npy")) for i in range(n)]


def refs_of(d):
    out, i = [], 0
    while os.path.exists(os.path.join(d, f"output_{i}.npy")):
        out.append(np.load(os.path.join(d, f"output_{i}.npy")))
        i += 1
    return out


def run(model, inputs):
    req = model.create_request()
    req.infer(inputs)
    req.wait()
    return [req.get_output(str(n)).to_numpy().copy() for n in model.output_names]


def image_variants(x, count):
    """count images derived from one NCHW image: flips, rolls, contrast and brightness changes."""
    rng = np.random.default_rng(0)
    out = [x]
    while len(out) < count:
        y = x
        if rng.random() < 0.5:
            y = y[..., ::-1]
        y = np.roll(y, shift=(int(rng.integers(-20, 21)), int(rng.integers(-20, 21))), axis=(2, 3))
        y = y * rng.uniform(0.7, 1.3) + rng.uniform(-0.3, 0.3)
        out.append(np.ascontiguousarray(y, dtype=np.float32))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", required=True)
    ap.add_argument("--only", default="resnet18,mobilenet_v2,bert_mini")
    ap.add_argument("--variants", type=int, default=16)
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    import optimium.runtime as rt
    print("| model | output | max rel. error fp32 vs PyTorch | max rel. error bf16 vs PyTorch | top-1 bf16 = PyTorch | top-1 bf16 = fp32 |")
    print("|---|---|---|---|---|---|")
    for name in [s for s in a.only.split(",") if s]:
        d = os.path.join(a.models, name)
        path = os.path.join(d, "model.onnx")
        f32 = rt.load_model(path, threads=a.threads)
        b16 = rt.load_model(path, threads=a.threads, compute_precision="bf16")
        ins = inputs_of(d, len(list(f32.input_names)))
        refs = refs_of(d)
        of, ob = run(f32, ins), run(b16, ins)
        image = len(ins) == 1 and ins[0].ndim == 4 and refs[0].ndim == 2
        for i, ref in enumerate(refs):
            scale = float(np.max(np.abs(ref)))
            ef = float(np.max(np.abs(of[i] - ref))) / scale
            eb = float(np.max(np.abs(ob[i] - ref))) / scale
            t_ref = t_f32 = "-"
            if image and i == 0:
                t_ref = "yes" if int(np.argmax(ob[0])) == int(np.argmax(ref)) else "no"
                agree = 0
                for x in image_variants(ins[0], a.variants):
                    agree += int(np.argmax(run(f32, [x])[0]) == np.argmax(run(b16, [x])[0]))
                t_f32 = f"{agree}/{a.variants}"
            out_name = str(list(f32.output_names)[i])
            print(f"| {name} | {out_name} | {ef:.1e} | {eb:.1e} | {t_ref} | {t_f32} |", flush=True)


if __name__ == "__main__":
    main()

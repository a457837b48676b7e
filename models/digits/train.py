#!/usr/bin/python3
"""Train a small CNN on scikit-learn's bundled 8x8 handwritten digits and export ONNX.

Run from anywhere:  /usr/bin/python3 models/digits/train.py
Writes all artifacts next to this script. Deterministic (fixed seeds, 1 thread).
"""
import os
import random

import numpy as np
import onnx
import torch
import torch.nn as nn
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

SEED = 0
EPOCHS = 60
BATCH = 64
OUT = os.path.dirname(os.path.abspath(__file__))

random.seed(SEED)
np.random.seed(SEED)
torch.manual_seed(SEED)
torch.set_num_threads(1)
torch.use_deterministic_algorithms(True)


class DigitsCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(),
            nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(),
            nn.MaxPool2d(2),                       # 32 x 4 x 4
        )
        self.classifier = nn.Sequential(
            nn.Flatten(),
            nn.Linear(32 * 4 * 4, 64), nn.ReLU(),
            nn.Linear(64, 10),
        )

    def forward(self, x):
        return torch.softmax(self.classifier(self.features(x)), dim=1)

    def logits(self, x):
        return self.classifier(self.features(x))


def main():
    digits = load_digits()
    x = (digits.images.astype(np.float32) / 16.0).reshape(-1, 1, 8, 8)
    y = digits.target.astype(np.int64)
    x_tr, x_te, y_tr, y_te = train_test_split(
        x, y, test_size=0.2, stratify=y, random_state=SEED)
    x_tr = np.ascontiguousarray(x_tr, dtype=np.float32)
    x_te = np.ascontiguousarray(x_te, dtype=np.float32)

    model = DigitsCNN()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()
    xt, yt = torch.from_numpy(x_tr), torch.from_numpy(y_tr)
    gen = torch.Generator().manual_seed(SEED)
    for epoch in range(EPOCHS):
        model.train()
        perm = torch.randperm(len(xt), generator=gen)
        total = 0.0
        for i in range(0, len(xt), BATCH):
            idx = perm[i:i + BATCH]
            opt.zero_grad()
            loss = loss_fn(model.logits(xt[idx]), yt[idx])
            loss.backward()
            opt.step()
            total += loss.item() * len(idx)
        if (epoch + 1) % 10 == 0:
            print(f"epoch {epoch + 1:3d}  train loss {total / len(xt):.4f}")

    model.eval()
    with torch.no_grad():
        probs = model(torch.from_numpy(x_te)).numpy().astype(np.float32)
    acc = float((probs.argmax(1) == y_te).mean())
    print(f"held-out accuracy: {acc * 100:.2f}% ({int((probs.argmax(1) == y_te).sum())}/{len(y_te)})")
    assert acc >= 0.97, acc

    # ---- ONNX export ----
    dummy = torch.from_numpy(x_te[:1])
    static_path = os.path.join(OUT, "model.onnx")
    batch_path = os.path.join(OUT, "model_batch.onnx")
    common = dict(opset_version=13, do_constant_folding=True,
                  input_names=["image"], output_names=["probabilities"],
                  export_params=True)
    torch.onnx.export(model, dummy, static_path, **common)
    torch.onnx.export(model, dummy, batch_path,
                      dynamic_axes={"image": {0: "batch"}, "probabilities": {0: "batch"}},
                      **common)

    allowed = {"Conv", "Relu", "MaxPool", "Flatten", "Reshape", "Gemm", "Softmax"}
    for p in (static_path, batch_path):
        m = onnx.load(p)
        onnx.checker.check_model(m, full_check=True)
        ops = [n.op_type for n in m.graph.node]
        assert set(ops) <= allowed, ops
        print(f"{os.path.basename(p)}: ops {ops}")

    # ---- reference data ----
    np.save(os.path.join(OUT, "test_images.npy"), x_te)
    np.save(os.path.join(OUT, "test_labels.npy"), y_te.astype(np.int64))
    np.save(os.path.join(OUT, "test_probabilities.npy"), probs)
    x_te.astype("<f4").tofile(os.path.join(OUT, "test_images.bin"))
    sample = x_te[:1].copy()
    np.save(os.path.join(OUT, "sample_input.npy"), sample)
    sample.astype("<f4").tofile(os.path.join(OUT, "sample_input.bin"))
    np.save(os.path.join(OUT, "sample_output.npy"), probs[:1].copy())
    print(f"wrote {len(y_te)} test digits; sample label {y_te[0]}, "
          f"sample argmax {probs[0].argmax()}")


if __name__ == "__main__":
    main()

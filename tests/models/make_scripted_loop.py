#!/usr/bin/python3
"""Generate tests/models/scripted_loop: a TorchScript-scripted module with a data-dependent loop
whose body holds an `if` that reads the module's weights, exported with torch.onnx.export (ONNX
Loop + If). The expected output is PyTorch's own result.

Run:  /usr/bin/python3 tests/models/make_scripted_loop.py   (Debian's torch; deterministic)

Writes model.onnx, input_<i>.npy (i = position in graph.input) and output_0.npy.
"""
import os

import numpy as np
import onnx
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "scripted_loop")


class ScriptedLoop(torch.nn.Module):
    def __init__(self):
        super().__init__()
        g = torch.Generator().manual_seed(0)
        self.w = torch.nn.Parameter(torch.randn(4, 4, generator=g) * 0.5)
        self.b = torch.nn.Parameter(torch.randn(4, generator=g) * 0.1)

    def forward(self, x: torch.Tensor, steps: torch.Tensor) -> torch.Tensor:
        h = x
        # The trip count is data (an input), and so is the branch taken each iteration.
        for _ in range(int(steps)):
            if bool(h.sum() > 0):
                h = torch.tanh(h @ self.w + self.b)
            else:
                h = h * 0.5 - self.b
        return h


def main():
    torch.manual_seed(0)
    m = torch.jit.script(ScriptedLoop().eval())
    x = torch.randn(2, 4, generator=torch.Generator().manual_seed(1))
    steps = torch.tensor(5, dtype=torch.int64)
    with torch.no_grad():
        y = m(x, steps)
    os.makedirs(OUT, exist_ok=True)
    path = os.path.join(OUT, "model.onnx")
    torch.onnx.export(m, (x, steps), path, input_names=["x", "steps"], output_names=["y"], opset_version=13)
    model = onnx.load(path)
    onnx.checker.check_model(model, full_check=True)
    ops = {n.op_type for n in model.graph.node}
    assert "Loop" in ops, ops
    body = [a.g for n in model.graph.node if n.op_type == "Loop" for a in n.attribute if a.name == "body"][0]
    assert any(n.op_type == "If" for n in body.node), [n.op_type for n in body.node]
    np.save(os.path.join(OUT, "input_0.npy"), x.numpy())
    np.save(os.path.join(OUT, "input_1.npy"), steps.numpy())
    np.save(os.path.join(OUT, "output_0.npy"), y.numpy())
    print("wrote", OUT, "ops:", sorted(ops), "body:", [n.op_type for n in body.node])


if __name__ == "__main__":
    main()

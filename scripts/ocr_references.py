"""Runs ONNX Runtime on the PaddleOCR models with fixed inputs and saves inputs and outputs as
.npy in the layout the real-model test reads: <dir>/<model>/model.onnx, [<case>_]input_<i>.npy,
[<case>_]output_<i>.npy."""
import os
import shutil
import sys

import numpy as np
import onnxruntime as ort

out = sys.argv[1]
assets = os.path.join(out, "package", "assets")
models = {
    # The detector takes any height/width (multiples of 32): two different sizes.
    "det": ("ch_PP-OCRv4_det_infer.onnx", {"small": (1, 3, 320, 480), "tall": (1, 3, 640, 320)}),
    "cls": ("ch_ppocr_mobile_v2.0_cls_infer.onnx", {"": (1, 3, 48, 192)}),
}
rng = np.random.default_rng(1234)
for name, (file, cases) in models.items():
    folder = os.path.join(out, name)
    os.makedirs(folder, exist_ok=True)
    shutil.copyfile(os.path.join(assets, file), os.path.join(folder, "model.onnx"))
    sess = ort.InferenceSession(os.path.join(folder, "model.onnx"), providers=["CPUExecutionProvider"])
    for case, shape in cases.items():
        prefix = case + "_" if case else ""
        # Normalized-image-like values, as PaddleOCR's preprocessing produces.
        x = rng.uniform(-1.0, 1.0, size=shape).astype(np.float32)
        feeds = {sess.get_inputs()[0].name: x}
        outputs = sess.run(None, feeds)
        np.save(os.path.join(folder, prefix + "input_0.npy"), x)
        for i, o in enumerate(outputs):
            np.save(os.path.join(folder, prefix + "output_%d.npy" % i), o)
        print("%s %s: input %s -> %s" % (name, case or "default", shape, [o.shape for o in outputs]))

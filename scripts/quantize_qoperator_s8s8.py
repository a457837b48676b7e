"""Quantizes an ONNX float32 model to int8 in QOperator form (QLinearConv, QLinearAdd, QGemm, ...)
with ONNX Runtime's static quantizer: int8 activations and int8 weights (symmetric, one scale per
output channel), the combination XNNPACK's qs8 / qc8 operators take. Calibrated on the model's
sample input and a few noisy copies of it (fixed seed).
Usage: quantize_qoperator_s8s8.py IN.onnx INPUT_0.npy OUT.onnx [N_CALIBRATION=4]"""
import sys

import numpy as np
import onnx
from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static


class SampleReader(CalibrationDataReader):
    def __init__(self, model_path, sample, count):
        m = onnx.load(model_path)
        inits = {t.name for t in m.graph.initializer}
        name = [i.name for i in m.graph.input if i.name not in inits][0]
        rng = np.random.default_rng(2024)
        batches = [sample] + [(sample + 0.3 * rng.standard_normal(sample.shape)).astype(np.float32)
                              for _ in range(count - 1)]
        self.batches = iter([{name: b} for b in batches])

    def get_next(self):
        return next(self.batches, None)


if __name__ == "__main__":
    src, sample, dst = sys.argv[1], np.load(sys.argv[2]), sys.argv[3]
    count = int(sys.argv[4]) if len(sys.argv) > 4 else 4
    # The model itself, not its path: from a path ORT writes "<name>-inferred.onnx" beside the
    # source and deletes it, which races with make-lowprec-models.sh quantizing the same model.
    quantize_static(onnx.load(src), dst, SampleReader(src, sample, count), quant_format=QuantFormat.QOperator,
                    activation_type=QuantType.QInt8, weight_type=QuantType.QInt8, per_channel=True)

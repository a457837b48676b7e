"""Quantizes an ONNX float32 model to int8 in QDQ form with ONNX Runtime's static quantizer,
calibrated on generated data (random normal inputs with the model's input shape, fixed seed).
Usage: quantize_int8.py IN.onnx OUT.onnx [N_CALIBRATION=32]"""
import sys

import numpy as np
import onnx
from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static


class RandomReader(CalibrationDataReader):
    def __init__(self, model_path, count):
        m = onnx.load(model_path)
        inits = {t.name for t in m.graph.initializer}
        self.inputs = [(i.name, [d.dim_value or 1 for d in i.type.tensor_type.shape.dim])
                       for i in m.graph.input if i.name not in inits]
        rng = np.random.default_rng(2024)
        self.batches = iter([{n: rng.standard_normal(s).astype(np.float32) for n, s in self.inputs}
                             for _ in range(count)])

    def get_next(self):
        return next(self.batches, None)


if __name__ == "__main__":
    src, dst = sys.argv[1], sys.argv[2]
    count = int(sys.argv[3]) if len(sys.argv) > 3 else 32
    # The model itself, not its path: from a path ORT writes "<name>-inferred.onnx" beside the
    # source and deletes it, which races with make-qoperator-models.sh quantizing the same model.
    quantize_static(onnx.load(src), dst, RandomReader(src, count), quant_format=QuantFormat.QDQ,
                    activation_type=QuantType.QInt8, weight_type=QuantType.QInt8, per_channel=True)

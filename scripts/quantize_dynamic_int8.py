"""Quantizes an ONNX float32 model's MatMul weights to int8 with ONNX Runtime's dynamic quantizer
(onnxruntime.quantization.quantize_dynamic, signed int8 weights per tensor): activations are
quantized to u8 at run time by DynamicQuantizeLinear, MatMulInteger multiplies, Cast and Mul scale
back to float. Usage: quantize_dynamic_int8.py IN.onnx OUT.onnx"""
import logging
import sys

from onnxruntime.quantization import QuantType, quantize_dynamic


def main():
    logging.getLogger().setLevel(logging.ERROR)  # the pre-processing hint is not an error
    quantize_dynamic(sys.argv[1], sys.argv[2], weight_type=QuantType.QInt8, op_types_to_quantize=["MatMul"])
    print(f"{sys.argv[2]}: MatMul weights quantized to int8 (dynamic activations)")


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Export the extra vision models of issue 20 (EfficientNet-B0, MobileNetV3-Small, SqueezeNet 1.1,
ResNet-50, ConvNeXt-Tiny) with the shared export script's own code path (same seeds, BatchNorm
calibration, input/output files and io.json), into the same folder as the reference models.

    /usr/bin/python3 scripts/export-extra-models.py --out build/exported-models [--only squeezenet1_1]

The shared script (../shared/models/export_models.py, or $OPTIMIUM_SHARED_DIR/models) only knows
mobilenet_v2 and resnet18 as torchvision models; this adds the five names to its list and calls its
main(). Random weights (nothing is downloaded).
"""
import importlib.util
import os
import sys

EXTRA = ["efficientnet_b0", "mobilenet_v3_small", "squeezenet1_1", "resnet50", "convnext_tiny"]


def shared_script():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for d in (os.environ.get("OPTIMIUM_SHARED_DIR", ""), os.path.join(root, "..", "shared"), "/work/shared"):
        p = os.path.join(d, "models", "export_models.py")
        if d and os.path.isfile(p):
            return p
    sys.exit("SKIP: ../shared/models/export_models.py not found (set OPTIMIUM_SHARED_DIR)")


def main():
    spec = importlib.util.spec_from_file_location("export_models", shared_script())
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.VISION_MODELS.extend(n for n in EXTRA if n not in mod.VISION_MODELS)
    if "--only" not in sys.argv:
        sys.argv += ["--only", ",".join(EXTRA)]
    return mod.main()


if __name__ == "__main__":
    sys.exit(main())

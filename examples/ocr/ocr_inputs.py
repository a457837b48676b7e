"""Inputs for the OCR example's tests (tests/python/test_ocr_example.py, check_cpp.py): bad files
each program must refuse with a clear message, and the test image in other channel layouts, which
must read exactly as the RGB original."""
import os

import numpy as np
from PIL import Image


def write_bad_inputs(folder, good_png):
    """(name, path, regex the error message must match besides the path) for each bad input."""
    os.makedirs(folder, exist_ok=True)
    cases = []

    def add(name, regex, data=None, image=None):
        path = os.path.join(folder, name)
        if image is not None:
            image.save(path)
        elif data is not None:
            with open(path, "wb") as f:
                f.write(data)
        cases.append((name, path, regex))

    with open(good_png, "rb") as f:
        png = f.read()
    add("missing.png", "no such file")
    add("empty.png", r"empty file \(0 bytes\)", data=b"")
    add("text.png", "not a PNG file|not an image", data=b"this is not an image\n" * 10)
    add("garbage-after-signature.png", "corrupt|not an image", data=png[:8] + bytes(range(256)) * 4)
    add("truncated.png", "corrupt", data=png[: len(png) // 2])
    add("tiny.png", "too small", image=Image.new("RGB", (4, 4), "white"))
    add("huge.png", "too large", image=Image.new("L", (8193, 16), 255))
    os.makedirs(os.path.join(folder, "a-directory.png"), exist_ok=True)
    cases.append(("a-directory.png", os.path.join(folder, "a-directory.png"), "is a directory"))
    return cases


def write_channel_variants(folder, rgb_png):
    """(layout, path): the image as grayscale, gray + alpha, RGBA (black text whose alpha is the
    ink), palette and 16-bit grayscale; every one decodes to the same RGB pixels."""
    os.makedirs(folder, exist_ok=True)
    rgb = Image.open(rgb_png).convert("RGB")
    gray = rgb.convert("L")
    ink = Image.fromarray(255 - np.asarray(gray))
    variants = {
        "gray": gray,
        "gray-alpha": Image.merge("LA", (gray, Image.new("L", gray.size, 255))),
        "rgba": Image.merge("RGBA", (Image.new("L", gray.size, 0),) * 3 + (ink,)),
        "palette": rgb.convert("P", palette=Image.Palette.ADAPTIVE, colors=256),
        "gray16": Image.fromarray(np.asarray(gray).astype(np.uint16) * 257),
    }
    out = []
    for name, im in variants.items():
        path = os.path.join(folder, name + ".png")
        im.save(path)
        out.append((name, path))
    return out

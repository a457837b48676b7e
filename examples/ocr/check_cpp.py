"""The ctest checks of optimium-ocr (run by check-cpp.sh with the shared .venv):

    check_cpp.py rendered OPTIMIUM_OCR MODELS_DIR WORKDIR
        renders the test image (render_test_image.py), runs optimium-ocr --json on it: the lines
        must read exactly as rendered, and match ocr.py's pipeline on ONNX Runtime (same strings,
        boxes within 2 px); the profiler's stage times must be there.
    check_cpp.py errors OPTIMIUM_OCR MODELS_DIR WORKDIR
        every bad input (ocr_inputs.py) exits with status 2 and one message naming the file; a JPEG
        is refused (PNG only); the image as gray / gray+alpha / RGBA / palette / 16-bit reads as
        the RGB original.
"""
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import ocr  # noqa: E402
import render_test_image  # noqa: E402
import ocr_inputs  # noqa: E402

failures = []


def check(ok, message):
    print(("ok    " if ok else "FAIL  ") + message)
    if not ok:
        failures.append(message)


def run_cpp(binary, image, models, *extra):
    return subprocess.run([binary, image, "--models", models] + list(extra), capture_output=True, text=True, timeout=300)


def read_json(binary, image, models, work):
    out = os.path.join(work, os.path.basename(image) + ".json")
    p = run_cpp(binary, image, models, "--json", out)
    if p.returncode != 0:
        check(False, "%s: exit %d: %s" % (image, p.returncode, p.stderr.strip()))
        return None
    with open(out, encoding="utf-8") as f:
        return json.load(f)


def render(work):
    png = os.path.join(work, "lines.png")
    render_test_image.render(render_test_image.DEFAULT_LINES).save(png)
    return png


def case_rendered(binary, models, work):
    png = render(work)
    ours = read_json(binary, png, models, work)
    if ours is None:
        return
    texts = [ln["text"] for ln in ours["lines"]]
    for ln in ours["lines"]:
        print("optimium-ocr:", json.dumps(ln, ensure_ascii=False))
    check(texts == render_test_image.DEFAULT_LINES, "strings exactly as rendered: %r" % texts)
    t = ours["times_ms"]
    check(all(t[s] > 0 for s in ("det", "cls", "rec", "total")), "profiler times det/cls/rec > 0: %r" % t)
    check(ours["runs"] == {"det": 1, "cls": 1, "rec": len(texts)}, "runs per model %r" % ours["runs"])

    paths, keys = ocr.model_paths(models)
    lines, _, _ = ocr.Pipeline(ocr.OrtRuntime(paths, 2), ocr.load_charset(keys))(ocr.read_image(png))
    check([ln["text"] for ln in lines] == texts, "ocr.py on ONNX Runtime reads the same strings: %r" % [ln["text"] for ln in lines])
    check(ocr.boxes_agree(ours["lines"], lines, tol=2), "boxes within 2 px of ocr.py on ONNX Runtime: %r vs %r"
          % ([ln["box"] for ln in ours["lines"]], [ln["box"] for ln in lines]))
    for a, b in zip(ours["lines"], lines):
        check(abs(a["score"] - b["score"]) < 1e-3, "score %.5f vs %.5f (%s)" % (a["score"], b["score"], a["text"]))


def case_errors(binary, models, work):
    png = render(work)
    cases = ocr_inputs.write_bad_inputs(os.path.join(work, "bad"), png)
    jpeg = os.path.join(work, "bad", "lines.jpg")
    from PIL import Image
    Image.open(png).save(jpeg)
    cases.append(("lines.jpg", jpeg, "not a PNG file"))
    for name, path, regex in cases:
        p = run_cpp(binary, path, models)
        msg = p.stderr.strip()
        check(p.returncode == 2 and path in msg and re.search(regex, msg) is not None and "\n" not in msg,
              "%s: exit %d, %r" % (name, p.returncode, msg))
    p = run_cpp(binary, png, os.path.join(work, "no-models"))
    check(p.returncode == 2 and "no-models" in p.stderr and "no such file" in p.stderr,
          "missing model folder: exit %d, %r" % (p.returncode, p.stderr.strip()))
    for name, path in ocr_inputs.write_channel_variants(os.path.join(work, "layouts"), png):
        res = read_json(binary, path, models, work)
        texts = [ln["text"] for ln in res["lines"]] if res else None
        check(texts == render_test_image.DEFAULT_LINES, "%s image reads as rendered: %r" % (name, texts))


def main():
    case, binary, models, work = sys.argv[1:5]
    os.makedirs(work, exist_ok=True)
    {"rendered": case_rendered, "errors": case_errors}[case](binary, models, work)
    print("%d failure(s)" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

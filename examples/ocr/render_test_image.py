"""Renders the OCR example's test image: a few lines of English text, black on white, with the
font Pillow embeds (ImageFont.load_default(size=...), Pillow >= 10.1: no system font needed).

    python render_test_image.py OUT.png [--lines "first line" "second line" ...] [--size 32]

Writes OUT.png and prints the lines it rendered, one per line (the expected OCR output).
"""
import argparse
import sys

from PIL import Image, ImageDraw, ImageFont

DEFAULT_LINES = ["Optimium Runtime 4.4", "model groups share one pool", "Three models, one thread pool"]


def render(lines, size=40, margin=24, spacing=1.0):
    """An RGB image with `lines` drawn top to bottom, left-aligned, black on white."""
    try:
        font = ImageFont.load_default(size=size)
    except TypeError:  # Pillow < 10.1: the bitmap default font has no size
        raise SystemExit("render_test_image.py needs Pillow >= 10.1 (ImageFont.load_default(size=...))")
    probe = ImageDraw.Draw(Image.new("RGB", (1, 1)))
    boxes = [probe.textbbox((0, 0), line, font=font) for line in lines]
    line_height = max(b[3] - b[1] for b in boxes)
    step = int(round(line_height * (1.0 + spacing)))
    # Sides rounded up to multiples of 32: the detector's input is then the image itself, not a
    # resampled copy (the models read the text no matter what, but the test is steadier this way).
    width = -(-(max(b[2] - b[0] for b in boxes) + 2 * margin) // 32) * 32
    height = -(-(step * (len(lines) - 1) + line_height + 2 * margin) // 32) * 32
    image = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(image)
    for i, (line, box) in enumerate(zip(lines, boxes)):
        draw.text((margin - box[0], margin + i * step - box[1]), line, font=font, fill="black")
    return image


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", help="PNG file to write")
    parser.add_argument("--lines", nargs="+", default=DEFAULT_LINES, help="text lines (default: %(default)s)")
    parser.add_argument("--size", type=int, default=40, help="font size in px (default: %(default)s)")
    args = parser.parse_args(argv)
    render(args.lines, size=args.size).save(args.out)
    print("\n".join(args.lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())

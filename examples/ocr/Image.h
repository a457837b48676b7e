// Images for the OCR example: a PNG read into 8-bit RGB (libpng), and the resampling PaddleOCR does
// with OpenCV (bilinear resize, perspective crop), written out by hand. ocr.py mirrors every step.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace ocr {

/// Image limits: below kMinSide there is no text to find; above kMaxSide pixels per side we refuse
/// to decode (an 8192 x 8192 RGB image is 192 MiB before any float copy).
constexpr int kMinSide = 8, kMaxSide = 8192;

/// 8-bit RGB, row-major, no padding.
struct Image {
  int Width = 0, Height = 0;
  std::vector<uint8_t> Pixels;

  Image() {}
  Image(int W, int H) : Width(W), Height(H), Pixels(static_cast<size_t>(W) * H * 3) {}
  uint8_t *at(int X, int Y) { return &Pixels[(static_cast<size_t>(Y) * Width + X) * 3]; }
  const uint8_t *at(int X, int Y) const { return &Pixels[(static_cast<size_t>(Y) * Width + X) * 3]; }
};

/// A bad input (image or model folder); the message names the file and says what is wrong.
class InputError : public std::runtime_error {
public:
  explicit InputError(const std::string &Message) : std::runtime_error(Message) {}
};

struct Point {
  double X = 0, Y = 0;
};

/// Reads a PNG into RGB: grayscale replicated, palettes expanded, alpha (or tRNS) composited on
/// white as PaddleOCR's alpha_to_color, 16-bit samples reduced to their high byte. InputError for
/// a missing, empty, non-PNG, corrupt, too small or too large file.
Image readPng(const std::string &Path);

/// OpenCV's INTER_LINEAR: pixel centers aligned, no antialiasing, rounded to 8 bits.
Image resizeBilinear(const Image &In, int Width, int Height);

/// PaddleOCR's get_rotate_crop_image: the quadrilateral (top-left, top-right, bottom-right,
/// bottom-left) warped to an upright rectangle by a homography, sampled bilinearly with the border
/// replicated, then turned 90 degrees counter-clockwise when its height / width >= 1.5.
Image cropQuad(const Image &In, const Point Quad[4]);

Image rotate180(const Image &In);

} // namespace ocr

// DB post-processing of the text detector (PaddleOCR's ppocr/postprocess/db_postprocess.py and
// tools/infer/predict_det.py) without OpenCV: thresholding, 8-connected components, convex hull +
// rotating calipers for the minimum-area rectangle, box score, unclip, scaling back to the image,
// clipping and the reading order. ocr.py mirrors it function by function.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "Image.h"

namespace ocr {

/// PaddleOCR's defaults (tools/infer/utility.py).
struct DbOptions {
  float Thresh = 0.3f;       ///< probability -> text pixel
  double BoxThresh = 0.6;    ///< minimum mean probability inside a box
  double UnclipRatio = 1.5;  ///< the box grows by area * ratio / perimeter on every side
  double MinSize = 3;        ///< shorter side of a box, in probability-map pixels
  size_t MaxCandidates = 1000;
};

struct TextBox {
  std::array<Point, 4> Corners; ///< top-left, top-right, bottom-right, bottom-left (image pixels)
  double Score = 0;             ///< mean probability inside the box
};

/// Boxes from the detector's H x W probability map for an image of ImageW x ImageH, filtered and
/// sorted top to bottom, left to right.
std::vector<TextBox> detectBoxes(const float *Prob, int MapW, int MapH, int ImageW, int ImageH,
                                 const DbOptions &Options = {});

// The steps, exposed for tests and for reading.
/// 8-connected components of Mask (row-major, MapW x MapH) as the end points of their row runs
/// (all a convex hull needs), in the order of their first pixel; the MaxCount largest if more.
std::vector<std::vector<Point>> connectedComponents(const std::vector<uint8_t> &Mask, int W, int H, size_t MaxCount);
/// Andrew's monotone chain, no collinear points.
std::vector<Point> convexHull(std::vector<Point> Points);
/// PaddleOCR's get_mini_boxes: the minimum-area rectangle (rotating calipers) as top-left,
/// top-right, bottom-right, bottom-left, and its shorter side.
std::array<Point, 4> miniBox(const std::vector<Point> &Points, double &ShortSide);
/// PaddleOCR's box_score_fast: mean of Prob over the box as cv2.fillPoly fills it.
double boxScore(const float *Prob, int W, int H, const std::array<Point, 4> &Box);
/// The rectangle grown by area * Ratio / perimeter on every side.
std::array<Point, 4> unclip(const std::array<Point, 4> &Box, double Ratio);

} // namespace ocr

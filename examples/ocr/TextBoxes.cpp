// DB post-processing without OpenCV; see TextBoxes.h. Each step follows PaddleOCR's code (and
// OpenCV's semantics where PaddleOCR calls it), and ocr.py computes the same numbers.
#include "TextBoxes.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <utility>

namespace ocr {

std::vector<std::vector<Point>> connectedComponents(const std::vector<uint8_t> &Mask, int W, int H, size_t MaxCount) {
  // Row runs [X0, X1] (inclusive), in row-major order; RowStart[y] = first run of row y.
  std::vector<int> RunY, RunX0, RunX1, RowStart(H + 1, 0);
  for (int Y = 0; Y < H; ++Y) {
    RowStart[Y] = static_cast<int>(RunY.size());
    const uint8_t *Row = &Mask[static_cast<size_t>(Y) * W];
    for (int X = 0; X < W;) {
      if (!Row[X]) {
        ++X;
        continue;
      }
      const int Start = X;
      while (X < W && Row[X])
        ++X;
      RunY.push_back(Y);
      RunX0.push_back(Start);
      RunX1.push_back(X - 1);
    }
  }
  RowStart[H] = static_cast<int>(RunY.size());
  const int N = static_cast<int>(RunY.size());
  std::vector<int> Parent(N);
  for (int I = 0; I < N; ++I)
    Parent[I] = I;
  auto Find = [&](int I) {
    while (Parent[I] != I) {
      Parent[I] = Parent[Parent[I]];
      I = Parent[I];
    }
    return I;
  };
  for (int Y = 1; Y < H; ++Y) {
    int A = RowStart[Y - 1], B = RowStart[Y];
    const int AEnd = RowStart[Y], BEnd = RowStart[Y + 1];
    while (A < AEnd && B < BEnd) {
      if (RunX0[A] <= RunX1[B] + 1 && RunX0[B] <= RunX1[A] + 1) { // touching, diagonals included
        const int Ra = Find(A), Rb = Find(B);
        if (Ra != Rb)
          Parent[std::max(Ra, Rb)] = std::min(Ra, Rb);
      }
      if (RunX1[A] < RunX1[B])
        ++A;
      else
        ++B;
    }
  }
  // Components in the order of their first run (the root is the smallest run index).
  std::map<int, size_t> Index;
  std::vector<std::pair<long, std::vector<Point>>> Comps;
  for (int I = 0; I < N; ++I) {
    const int R = Find(I);
    auto It = Index.find(R);
    if (It == Index.end()) {
      It = Index.emplace(R, Comps.size()).first;
      Comps.emplace_back(0L, std::vector<Point>());
    }
    auto &C = Comps[It->second];
    C.first += RunX1[I] - RunX0[I] + 1;
    C.second.push_back({double(RunX0[I]), double(RunY[I])});
    C.second.push_back({double(RunX1[I]), double(RunY[I])});
  }
  if (Comps.size() > MaxCount) {
    std::stable_sort(Comps.begin(), Comps.end(), [](const auto &A, const auto &B) { return A.first > B.first; });
    Comps.resize(MaxCount);
  }
  std::vector<std::vector<Point>> Out;
  Out.reserve(Comps.size());
  for (auto &C : Comps)
    Out.push_back(std::move(C.second));
  return Out;
}

std::vector<Point> convexHull(std::vector<Point> Pts) {
  auto Less = [](const Point &A, const Point &B) { return A.X < B.X || (A.X == B.X && A.Y < B.Y); };
  std::sort(Pts.begin(), Pts.end(), Less);
  Pts.erase(std::unique(Pts.begin(), Pts.end(), [](const Point &A, const Point &B) { return A.X == B.X && A.Y == B.Y; }),
            Pts.end());
  if (Pts.size() <= 2)
    return Pts;
  auto Cross = [](const Point &O, const Point &A, const Point &B) {
    return (A.X - O.X) * (B.Y - O.Y) - (A.Y - O.Y) * (B.X - O.X);
  };
  std::vector<Point> Lower, Upper;
  for (const Point &P : Pts) {
    while (Lower.size() >= 2 && Cross(Lower[Lower.size() - 2], Lower.back(), P) <= 0)
      Lower.pop_back();
    Lower.push_back(P);
  }
  for (auto It = Pts.rbegin(); It != Pts.rend(); ++It) {
    while (Upper.size() >= 2 && Cross(Upper[Upper.size() - 2], Upper.back(), *It) <= 0)
      Upper.pop_back();
    Upper.push_back(*It);
  }
  Lower.pop_back();
  Upper.pop_back();
  Lower.insert(Lower.end(), Upper.begin(), Upper.end());
  return Lower;
}

namespace {

/// Rotating calipers: for each hull edge, the bounding rectangle aligned with it; the smallest wins
/// (cv2.minAreaRect + cv2.boxPoints). Corners in the order (u0,v0), (u1,v0), (u1,v1), (u0,v1).
std::array<Point, 4> minAreaRect(const std::vector<Point> &Points, double &ShortSide) {
  const std::vector<Point> Hull = convexHull(Points);
  if (Hull.size() == 1) {
    ShortSide = 0;
    return {Hull[0], Hull[0], Hull[0], Hull[0]};
  }
  bool Found = false;
  double Best = 0, Ex = 0, Ey = 0, U0 = 0, U1 = 0, V0 = 0, V1 = 0;
  for (size_t I = 0; I < Hull.size(); ++I) {
    const Point &A = Hull[I], &B = Hull[(I + 1) % Hull.size()];
    double Dx = B.X - A.X, Dy = B.Y - A.Y;
    const double L = std::hypot(Dx, Dy);
    Dx /= L;
    Dy /= L;
    const double Nx = -Dy, Ny = Dx;
    double Umin = std::numeric_limits<double>::infinity(), Umax = -Umin, Vmin = Umin, Vmax = -Umin;
    for (const Point &P : Hull) {
      const double U = P.X * Dx + P.Y * Dy, V = P.X * Nx + P.Y * Ny;
      Umin = std::min(Umin, U);
      Umax = std::max(Umax, U);
      Vmin = std::min(Vmin, V);
      Vmax = std::max(Vmax, V);
    }
    const double Area = (Umax - Umin) * (Vmax - Vmin);
    if (!Found || Area < Best - 1e-9) {
      Found = true;
      Best = Area;
      Ex = Dx;
      Ey = Dy;
      U0 = Umin;
      U1 = Umax;
      V0 = Vmin;
      V1 = Vmax;
    }
  }
  const double Nx = -Ey, Ny = Ex;
  auto Corner = [&](double U, double V) { return Point{U * Ex + V * Nx, U * Ey + V * Ny}; };
  ShortSide = std::min(U1 - U0, V1 - V0);
  return {Corner(U0, V0), Corner(U1, V0), Corner(U1, V1), Corner(U0, V1)};
}

} // namespace

std::array<Point, 4> miniBox(const std::vector<Point> &Points, double &ShortSide) {
  std::array<Point, 4> P = minAreaRect(Points, ShortSide);
  std::stable_sort(P.begin(), P.end(), [](const Point &A, const Point &B) { return A.X < B.X; });
  int I1 = 0, I2 = 2, I3 = 3, I4 = 1;
  if (!(P[1].Y > P[0].Y)) {
    I1 = 1;
    I4 = 0;
  }
  if (!(P[3].Y > P[2].Y)) {
    I2 = 3;
    I3 = 2;
  }
  return {P[I1], P[I2], P[I3], P[I4]};
}

double boxScore(const float *Prob, int W, int H, const std::array<Point, 4> &Box) {
  double MinX = Box[0].X, MaxX = Box[0].X, MinY = Box[0].Y, MaxY = Box[0].Y;
  for (const Point &P : Box) {
    MinX = std::min(MinX, P.X);
    MaxX = std::max(MaxX, P.X);
    MinY = std::min(MinY, P.Y);
    MaxY = std::max(MaxY, P.Y);
  }
  auto Clip = [](double V, int Hi) { return static_cast<int>(std::min(std::max(V, 0.0), double(Hi))); };
  const int X0 = Clip(std::floor(MinX), W - 1), X1 = Clip(std::ceil(MaxX), W - 1);
  const int Y0 = Clip(std::floor(MinY), H - 1), Y1 = Clip(std::ceil(MaxY), H - 1);
  const int Rows = Y1 - Y0 + 1;
  // The quadrilateral filled as cv2.fillPoly does: corners truncated to integers, edges drawn as
  // lines (one pixel per step along the longer axis), each row filled between its outer pixels.
  std::vector<long> Left(Rows, std::numeric_limits<long>::max()), Right(Rows, -1);
  for (int I = 0; I < 4; ++I) {
    const long Ax = static_cast<long>(std::trunc(Box[I].X)) - X0, Ay = static_cast<long>(std::trunc(Box[I].Y)) - Y0;
    const long Bx = static_cast<long>(std::trunc(Box[(I + 1) % 4].X)) - X0;
    const long By = static_cast<long>(std::trunc(Box[(I + 1) % 4].Y)) - Y0;
    const long N = std::max({std::labs(Bx - Ax), std::labs(By - Ay), 1L});
    for (long K = 0; K <= N; ++K) {
      const double T = static_cast<double>(K) / N;
      const long X = static_cast<long>(std::floor(Ax + (Bx - Ax) * T + 0.5));
      const long Y = static_cast<long>(std::floor(Ay + (By - Ay) * T + 0.5));
      if (Y < 0 || Y >= Rows)
        continue;
      Left[Y] = std::min(Left[Y], X);
      Right[Y] = std::max(Right[Y], X);
    }
  }
  double Sum = 0;
  long Count = 0;
  for (int R = 0; R < Rows; ++R) {
    const long Lo = std::max(Left[R], 0L), Hi = std::min(Right[R], static_cast<long>(X1 - X0));
    for (long X = Lo; X <= Hi; ++X)
      Sum += Prob[static_cast<size_t>(Y0 + R) * W + X0 + X];
    if (Lo <= Hi)
      Count += Hi - Lo + 1;
  }
  return Count ? Sum / Count : 0.0;
}

std::array<Point, 4> unclip(const std::array<Point, 4> &B, double Ratio) {
  const double SuX = B[1].X - B[0].X, SuY = B[1].Y - B[0].Y, SvX = B[3].X - B[0].X, SvY = B[3].Y - B[0].Y;
  const double Lu = std::hypot(SuX, SuY), Lv = std::hypot(SvX, SvY);
  const double D = (Lu * Lv) * Ratio / (2.0 * (Lu + Lv));
  const double Ux = SuX / Lu * D, Uy = SuY / Lu * D, Vx = SvX / Lv * D, Vy = SvY / Lv * D;
  return {Point{B[0].X - Ux - Vx, B[0].Y - Uy - Vy}, Point{B[1].X + Ux - Vx, B[1].Y + Uy - Vy},
          Point{B[2].X + Ux + Vx, B[2].Y + Uy + Vy}, Point{B[3].X - Ux + Vx, B[3].Y - Uy + Vy}};
}

namespace {

/// PaddleOCR's order_points_clockwise: smallest x+y first, largest x+y third, the other two by y-x.
std::array<Point, 4> orderClockwise(const std::array<Point, 4> &P) {
  int Tl = 0, Br = 0;
  for (int I = 1; I < 4; ++I) {
    if (P[I].X + P[I].Y < P[Tl].X + P[Tl].Y)
      Tl = I;
    if (P[I].X + P[I].Y > P[Br].X + P[Br].Y)
      Br = I;
  }
  std::vector<Point> Rest;
  for (int I = 0; I < 4; ++I)
    if (I != Tl && I != Br)
      Rest.push_back(P[I]);
  size_t Min = 0, Max = 0;
  for (size_t I = 1; I < Rest.size(); ++I) {
    if (Rest[I].Y - Rest[I].X < Rest[Min].Y - Rest[Min].X)
      Min = I;
    if (Rest[I].Y - Rest[I].X > Rest[Max].Y - Rest[Max].X)
      Max = I;
  }
  return {P[Tl], Rest[Min], P[Br], Rest[Max]};
}

double distance(const Point &A, const Point &B) {
  const double Dx = A.X - B.X, Dy = A.Y - B.Y;
  return std::sqrt(Dx * Dx + Dy * Dy);
}

} // namespace

std::vector<TextBox> detectBoxes(const float *Prob, int MapW, int MapH, int ImageW, int ImageH, const DbOptions &O) {
  std::vector<uint8_t> Mask(static_cast<size_t>(MapW) * MapH);
  for (size_t I = 0; I < Mask.size(); ++I)
    Mask[I] = Prob[I] > O.Thresh;
  std::vector<TextBox> Boxes;
  for (const std::vector<Point> &Comp : connectedComponents(Mask, MapW, MapH, O.MaxCandidates)) {
    double Short = 0;
    std::array<Point, 4> Box = miniBox(Comp, Short);
    if (Short < O.MinSize)
      continue;
    const double Score = boxScore(Prob, MapW, MapH, Box);
    if (Score < O.BoxThresh)
      continue;
    const std::array<Point, 4> Grown = unclip(Box, O.UnclipRatio);
    Box = miniBox(std::vector<Point>(Grown.begin(), Grown.end()), Short);
    if (Short < O.MinSize + 2)
      continue;
    TextBox T;
    for (int I = 0; I < 4; ++I) { // to image pixels, rounded half to even as numpy does
      const double X = std::nearbyint(Box[I].X / MapW * ImageW), Y = std::nearbyint(Box[I].Y / MapH * ImageH);
      T.Corners[I] = {std::min(std::max(X, 0.0), double(ImageW)), std::min(std::max(Y, 0.0), double(ImageH))};
    }
    T.Score = Score;
    Boxes.push_back(T);
  }
  // filter_tag_det_res: clockwise corners clipped to the image; boxes of 3 px or less dropped.
  std::vector<TextBox> Kept;
  for (TextBox T : Boxes) {
    T.Corners = orderClockwise(T.Corners);
    for (Point &P : T.Corners) {
      P.X = std::min(std::max(P.X, 0.0), double(ImageW - 1));
      P.Y = std::min(std::max(P.Y, 0.0), double(ImageH - 1));
    }
    if (static_cast<int>(distance(T.Corners[0], T.Corners[1])) <= 3 ||
        static_cast<int>(distance(T.Corners[0], T.Corners[3])) <= 3)
      continue;
    Kept.push_back(T);
  }
  // sorted_boxes: top to bottom, then left to right among boxes whose tops are within 10 px.
  std::stable_sort(Kept.begin(), Kept.end(), [](const TextBox &A, const TextBox &B) {
    return A.Corners[0].Y < B.Corners[0].Y || (A.Corners[0].Y == B.Corners[0].Y && A.Corners[0].X < B.Corners[0].X);
  });
  for (size_t I = 0; I + 1 < Kept.size(); ++I) {
    for (size_t J = I + 1; J-- > 0;) {
      if (std::fabs(Kept[J + 1].Corners[0].Y - Kept[J].Corners[0].Y) < 10 &&
          Kept[J + 1].Corners[0].X < Kept[J].Corners[0].X)
        std::swap(Kept[J], Kept[J + 1]);
      else
        break;
    }
  }
  return Kept;
}

} // namespace ocr

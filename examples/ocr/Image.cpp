// PNG input (libpng's classic API with setjmp error handling) and the hand-written resampling of
// the OCR example; see Image.h.
#include "Image.h"

#include <png.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <memory>

namespace ocr {

namespace {

struct PngState {
  char Message[256] = {0};
};

[[noreturn]] void onPngError(png_structp Png, png_const_charp Message) {
  auto *S = static_cast<PngState *>(png_get_error_ptr(Png));
  std::snprintf(S->Message, sizeof(S->Message), "%s", Message ? Message : "libpng error");
  std::longjmp(png_jmpbuf(Png), 1);
}

void onPngWarning(png_structp, png_const_charp) {} // e.g. a bad iCCP profile: harmless here

enum class PngResult { Ok, Error, TooSmall, TooLarge };

/// The decoding proper. Only trivially destructible locals live here: libpng longjmps back to the
/// setjmp below on any error, which would skip destructors. Rows / Pixels belong to the caller.
PngResult decodePng(png_structp Png, png_infop Info, FILE *File, std::vector<uint8_t> &Pixels,
                    std::vector<png_bytep> &Rows, png_uint_32 &Width, png_uint_32 &Height, int &Channels) {
  if (setjmp(png_jmpbuf(Png)))
    return PngResult::Error;
  png_init_io(Png, File);
  png_read_info(Png, Info);
  int BitDepth = 0, ColorType = 0;
  png_get_IHDR(Png, Info, &Width, &Height, &BitDepth, &ColorType, nullptr, nullptr, nullptr);
  if (Width < static_cast<png_uint_32>(kMinSide) || Height < static_cast<png_uint_32>(kMinSide))
    return PngResult::TooSmall;
  if (Width > static_cast<png_uint_32>(kMaxSide) || Height > static_cast<png_uint_32>(kMaxSide))
    return PngResult::TooLarge;
  if (BitDepth == 16)
    png_set_strip_16(Png);
  if (ColorType == PNG_COLOR_TYPE_PALETTE)
    png_set_palette_to_rgb(Png);
  if (ColorType == PNG_COLOR_TYPE_GRAY && BitDepth < 8)
    png_set_expand_gray_1_2_4_to_8(Png);
  if (png_get_valid(Png, Info, PNG_INFO_tRNS))
    png_set_tRNS_to_alpha(Png);
  png_set_interlace_handling(Png);
  png_read_update_info(Png, Info);
  Channels = png_get_channels(Png, Info);
  const size_t RowBytes = png_get_rowbytes(Png, Info);
  Pixels.resize(RowBytes * Height);
  Rows.resize(Height);
  for (png_uint_32 Y = 0; Y < Height; ++Y)
    Rows[Y] = Pixels.data() + RowBytes * Y;
  png_read_image(Png, Rows.data());
  png_read_end(Png, nullptr);
  return PngResult::Ok;
}

struct FileCloser {
  void operator()(FILE *F) const { std::fclose(F); }
};

} // namespace

Image readPng(const std::string &Path) {
  struct stat St;
  if (::stat(Path.c_str(), &St) != 0)
    throw InputError(Path + ": no such file");
  if (S_ISDIR(St.st_mode))
    throw InputError(Path + ": is a directory, not an image");
  if (St.st_size == 0)
    throw InputError(Path + ": empty file (0 bytes)");
  std::unique_ptr<FILE, FileCloser> File(std::fopen(Path.c_str(), "rb"));
  if (!File)
    throw InputError(Path + ": cannot open (" + std::strerror(errno) + ")");
  png_byte Signature[8] = {0};
  const size_t Got = std::fread(Signature, 1, sizeof(Signature), File.get());
  if (Got != sizeof(Signature) || png_sig_cmp(Signature, 0, sizeof(Signature)) != 0)
    throw InputError(Path + ": not a PNG file (this program reads PNG only)");

  PngState State;
  png_structp Png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &State, onPngError, onPngWarning);
  png_infop Info = Png ? png_create_info_struct(Png) : nullptr;
  if (!Png || !Info) {
    png_destroy_read_struct(Png ? &Png : nullptr, nullptr, nullptr);
    throw InputError(Path + ": out of memory creating the PNG reader");
  }
  png_set_sig_bytes(Png, sizeof(Signature));
  std::vector<uint8_t> Raw;
  std::vector<png_bytep> Rows;
  png_uint_32 W = 0, H = 0;
  int Channels = 0;
  const PngResult R = decodePng(Png, Info, File.get(), Raw, Rows, W, H, Channels);
  png_destroy_read_struct(&Png, &Info, nullptr);
  const std::string Size = std::to_string(W) + "x" + std::to_string(H);
  switch (R) {
  case PngResult::Error:
    throw InputError(Path + ": corrupt PNG (" + State.Message + ")");
  case PngResult::TooSmall:
    throw InputError(Path + ": image too small (" + Size + "; at least " + std::to_string(kMinSide) + " px per side)");
  case PngResult::TooLarge:
    throw InputError(Path + ": image too large (" + Size + "; at most " + std::to_string(kMaxSide) + " px per side)");
  case PngResult::Ok:
    break;
  }
  if (Channels < 1 || Channels > 4)
    throw InputError(Path + ": unsupported PNG layout (" + std::to_string(Channels) + " channels)");

  Image Out(static_cast<int>(W), static_cast<int>(H));
  const bool Gray = Channels <= 2, Alpha = Channels == 2 || Channels == 4;
  for (size_t I = 0, N = static_cast<size_t>(W) * H; I < N; ++I) {
    const uint8_t *S = &Raw[I * Channels];
    uint8_t *D = &Out.Pixels[I * 3];
    for (int C = 0; C < 3; ++C) {
      const int V = Gray ? S[0] : S[C];
      if (!Alpha) {
        D[C] = static_cast<uint8_t>(V);
      } else {
        const int A = S[Channels - 1]; // c * alpha + white * (1 - alpha), truncated
        D[C] = static_cast<uint8_t>((V * A + 255 * (255 - A)) / 255);
      }
    }
  }
  return Out;
}

namespace {

struct Taps {
  std::vector<int> I0, I1;
  std::vector<double> Frac;
};

Taps bilinearTaps(int Out, int In) {
  Taps T;
  T.I0.resize(Out);
  T.I1.resize(Out);
  T.Frac.resize(Out);
  const double Scale = static_cast<double>(In) / Out;
  for (int I = 0; I < Out; ++I) {
    const double Src = std::max((I + 0.5) * Scale - 0.5, 0.0);
    const double F = std::floor(Src);
    const int I0 = static_cast<int>(F);
    T.Frac[I] = Src - F;
    T.I0[I] = std::min(I0, In - 1);
    T.I1[I] = std::min(T.I0[I] + 1, In - 1);
  }
  return T;
}

uint8_t roundToByte(double V) { return static_cast<uint8_t>(std::floor(V + 0.5)); }

} // namespace

Image resizeBilinear(const Image &In, int Width, int Height) {
  Image Out(Width, Height);
  const Taps X = bilinearTaps(Width, In.Width), Y = bilinearTaps(Height, In.Height);
  for (int Row = 0; Row < Height; ++Row) {
    const double Fy = Y.Frac[Row];
    for (int Col = 0; Col < Width; ++Col) {
      const double Fx = X.Frac[Col];
      const uint8_t *A = In.at(X.I0[Col], Y.I0[Row]), *B = In.at(X.I1[Col], Y.I0[Row]);
      const uint8_t *C = In.at(X.I0[Col], Y.I1[Row]), *D = In.at(X.I1[Col], Y.I1[Row]);
      uint8_t *O = Out.at(Col, Row);
      for (int Ch = 0; Ch < 3; ++Ch) {
        const double Top = A[Ch] * (1.0 - Fx) + B[Ch] * Fx;
        const double Bottom = C[Ch] * (1.0 - Fx) + D[Ch] * Fx;
        O[Ch] = roundToByte(Top * (1.0 - Fy) + Bottom * Fy);
      }
    }
  }
  return Out;
}

namespace {

/// H (row-major, H[8] = 1) with H * Src[i] ~ Dst[i]: cv2.getPerspectiveTransform's 8 x 8 system,
/// solved by Gaussian elimination with partial pivoting.
void solveHomography(const Point Src[4], const Point Dst[4], double H[9]) {
  double A[8][9] = {{0}};
  for (int I = 0; I < 4; ++I) {
    const double X = Src[I].X, Y = Src[I].Y, U = Dst[I].X, V = Dst[I].Y;
    const double RowU[9] = {X, Y, 1, 0, 0, 0, -X * U, -Y * U, U};
    const double RowV[9] = {0, 0, 0, X, Y, 1, -X * V, -Y * V, V};
    std::copy(RowU, RowU + 9, A[I]);
    std::copy(RowV, RowV + 9, A[I + 4]);
  }
  for (int Col = 0; Col < 8; ++Col) {
    int Pivot = Col;
    for (int R = Col + 1; R < 8; ++R)
      if (std::fabs(A[R][Col]) > std::fabs(A[Pivot][Col]))
        Pivot = R;
    if (std::fabs(A[Pivot][Col]) < 1e-12)
      throw std::runtime_error("degenerate text box (no perspective transform)");
    std::swap(A[Col], A[Pivot]);
    for (int R = 0; R < 8; ++R) {
      if (R == Col)
        continue;
      const double F = A[R][Col] / A[Col][Col];
      for (int C = Col; C < 9; ++C)
        A[R][C] -= F * A[Col][C];
    }
  }
  for (int I = 0; I < 8; ++I)
    H[I] = A[I][8] / A[I][I];
  H[8] = 1.0;
}

double distance(const Point &A, const Point &B) {
  const double Dx = A.X - B.X, Dy = A.Y - B.Y;
  return std::sqrt(Dx * Dx + Dy * Dy);
}

} // namespace

Image cropQuad(const Image &In, const Point Quad[4]) {
  const int W = std::max(1, static_cast<int>(std::max(distance(Quad[0], Quad[1]), distance(Quad[2], Quad[3]))));
  const int H = std::max(1, static_cast<int>(std::max(distance(Quad[0], Quad[3]), distance(Quad[1], Quad[2]))));
  const Point Rect[4] = {{0, 0}, {double(W), 0}, {double(W), double(H)}, {0, double(H)}};
  double M[9];
  solveHomography(Rect, Quad, M); // output pixel -> source position
  Image Out(W, H);
  for (int Y = 0; Y < H; ++Y) {
    for (int X = 0; X < W; ++X) {
      const double Den = M[6] * X + M[7] * Y + M[8];
      const double Sx = (M[0] * X + M[1] * Y + M[2]) / Den;
      const double Sy = (M[3] * X + M[4] * Y + M[5]) / Den;
      const double X0f = std::floor(Sx), Y0f = std::floor(Sy);
      const double Fx = Sx - X0f, Fy = Sy - Y0f;
      // Clamped in double first: a far-off position must not overflow the int conversion.
      const double Xc = std::min(std::max(X0f, -1.0), static_cast<double>(In.Width));
      const double Yc = std::min(std::max(Y0f, -1.0), static_cast<double>(In.Height));
      const int X0 = std::min(std::max(static_cast<int>(Xc), 0), In.Width - 1);
      const int X1 = std::min(std::max(static_cast<int>(Xc) + 1, 0), In.Width - 1);
      const int Y0 = std::min(std::max(static_cast<int>(Yc), 0), In.Height - 1);
      const int Y1 = std::min(std::max(static_cast<int>(Yc) + 1, 0), In.Height - 1);
      const uint8_t *A = In.at(X0, Y0), *B = In.at(X1, Y0), *C = In.at(X0, Y1), *D = In.at(X1, Y1);
      uint8_t *O = Out.at(X, Y);
      for (int Ch = 0; Ch < 3; ++Ch) {
        const double Top = A[Ch] * (1.0 - Fx) + B[Ch] * Fx;
        const double Bottom = C[Ch] * (1.0 - Fx) + D[Ch] * Fx;
        O[Ch] = roundToByte(Top * (1.0 - Fy) + Bottom * Fy);
      }
    }
  }
  if (Out.Height >= 1.5 * Out.Width) { // np.rot90: counter-clockwise
    Image Turned(Out.Height, Out.Width);
    for (int Y = 0; Y < Turned.Height; ++Y)
      for (int X = 0; X < Turned.Width; ++X)
        std::copy(Out.at(Out.Width - 1 - Y, X), Out.at(Out.Width - 1 - Y, X) + 3, Turned.at(X, Y));
    return Turned;
  }
  return Out;
}

Image rotate180(const Image &In) {
  Image Out(In.Width, In.Height);
  for (int Y = 0; Y < In.Height; ++Y)
    for (int X = 0; X < In.Width; ++X)
      std::copy(In.at(X, Y), In.at(X, Y) + 3, Out.at(In.Width - 1 - X, In.Height - 1 - Y));
  return Out;
}

} // namespace ocr

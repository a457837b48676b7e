// Runs a corpus of models against saved reference outputs (ONNX Runtime's) and prints, per case,
// the largest difference relative to the output's scale, then `N passed, N failed`.
//
// The corpus is an index.json (written by scripts/fetch-real-models.py for the pretrained models
// and by scripts/difftest.py for random graphs):
//   {"models": [{"name", "model" (path), "source", "tolerance", "cases": [{"name",
//     "state": {output: input}, "steps": [{"inputs": {name: npy}, "outputs": {name: npy}}]}]}]}
// paths relative to the index's folder. A model entry with "load_error": [text, ...] instead
// checks a model the runtime must refuse: loading it must fail with an error that contains every
// text (one result, case "load_error"; "cases" is empty). A stateful case feeds its own previous
// outputs back (the `state` map) from the second step on, as an application would. Float outputs
// pass when max|ours - ref| <= tolerance * max|ref| (NaN and inf must sit where the reference has
// them); integer and bool outputs must match exactly.
//
//   optimium_corpus_runner INDEX.json [--only NAME[,NAME...]] [--threads N] [--json REPORT.json]
// Exit code 0 when every case passes, 1 otherwise, 2 on a bad command line or index.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "Optimium/Runtime.h"
#include "Optimium/Runtime/Types/BFloat16.h"
#include "Optimium/Runtime/Types/Float16.h"
#include "Optimium/Runtime/Utils/StreamHelper.h"
#include "TestUtil.h"

namespace rt = optimium::runtime;
using nlohmann::json;

namespace {

struct Comparison {
  bool Ok = true;
  double RelDiff = 0; ///< max|a - b| / max|ref| (floats); mismatch fraction (integers)
  std::string Problem;
};

bool isFloat(rt::ElementType T) {
  return T == rt::ElementType::F32 || T == rt::ElementType::F64 || T == rt::ElementType::F16 ||
         T == rt::ElementType::BF16;
}

double floatAt(const rt::Tensor &T, size_t I) {
  switch (T.getType()) {
  case rt::ElementType::F32: return static_cast<const float *>(T.data())[I];
  case rt::ElementType::F64: return static_cast<const double *>(T.data())[I];
  case rt::ElementType::F16: return static_cast<const rt::float16 *>(T.data())[I];
  case rt::ElementType::BF16: return static_cast<const rt::bfloat16 *>(T.data())[I];
  default: return 0;
  }
}

std::string shapeText(const rt::Tensor &T) {
  std::ostringstream S;
  S << T.getShape();
  return S.str();
}

Comparison compare(const rt::Tensor &Got, const rt::Tensor &Ref, double Tolerance) {
  Comparison C;
  if (Got.getType() != Ref.getType()) {
    C.Ok = false;
    C.Problem = "element type " + std::string(rt::toString(Got.getType())) + ", reference " +
                rt::toString(Ref.getType());
    return C;
  }
  if (!(Got.getShape() == Ref.getShape())) {
    C.Ok = false;
    C.Problem = "shape " + shapeText(Got) + ", reference " + shapeText(Ref);
    return C;
  }
  const size_t N = Ref.getElementCount();
  if (!isFloat(Ref.getType())) {
    const size_t Size = rt::getElementSize(Ref.getType());
    size_t Mismatches = 0, First = N;
    for (size_t I = 0; I < N; ++I)
      if (std::memcmp(static_cast<const char *>(Got.data()) + I * Size,
                      static_cast<const char *>(Ref.data()) + I * Size, Size) != 0) {
        if (First == N)
          First = I;
        ++Mismatches;
      }
    C.RelDiff = N ? static_cast<double>(Mismatches) / static_cast<double>(N) : 0;
    if (Mismatches) {
      C.Ok = false;
      C.Problem = std::to_string(Mismatches) + " of " + std::to_string(N) + " elements differ (first at flat index " +
                  std::to_string(First) + ")";
    }
    return C;
  }
  double Scale = 0, Diff = 0;
  size_t Worst = 0, NanMismatch = 0, InfMismatch = 0;
  for (size_t I = 0; I < N; ++I) {
    const double R = floatAt(Ref, I);
    if (std::isfinite(R))
      Scale = std::max(Scale, std::fabs(R));
  }
  for (size_t I = 0; I < N; ++I) {
    const double R = floatAt(Ref, I), G = floatAt(Got, I);
    if (std::isnan(R) || std::isnan(G)) {
      NanMismatch += std::isnan(R) != std::isnan(G);
      continue;
    }
    if (std::isinf(R) || std::isinf(G)) {
      InfMismatch += R != G;
      continue;
    }
    if (std::fabs(G - R) > Diff) {
      Diff = std::fabs(G - R);
      Worst = I;
    }
  }
  C.RelDiff = Diff / std::max(Scale, 1e-6);
  std::ostringstream P;
  if (NanMismatch)
    P << NanMismatch << " NaN(s) where the reference has none or the reverse; ";
  if (InfMismatch)
    P << InfMismatch << " inf(s) that differ; ";
  if (C.RelDiff > Tolerance)
    P << "max abs diff " << Diff << " at flat index " << Worst << " (ours " << floatAt(Got, Worst) << ", reference "
      << floatAt(Ref, Worst) << ") exceeds " << Tolerance << " x output scale " << Scale;
  C.Problem = P.str();
  C.Ok = C.Problem.empty();
  return C;
}

struct CaseResult {
  std::string Model, Case, Status, Message;
  double MaxRelDiff = 0;
};

std::string joinPath(const std::string &Dir, const std::string &Rel) {
  if (!Rel.empty() && Rel[0] == '/')
    return Rel;
  return Dir.empty() ? Rel : Dir + "/" + Rel;
}

/// Runs one case: every step, feeding the state outputs back. Fills R (never throws).
void runCase(rt::Model &M, const std::string &Dir, const json &Case, double Tolerance, CaseResult &R) {
  std::map<std::string, std::string> State;
  if (Case.contains("state") && Case["state"].is_object())
    for (auto It = Case["state"].begin(); It != Case["state"].end(); ++It)
      State[It.key()] = It.value().get<std::string>();
  std::map<std::string, rt::Tensor> Carried; // input name -> our previous output
  rt::InferRequest Request = M.createRequest();
  size_t StepIndex = 0;
  std::ostringstream Problems;
  for (const json &Step : Case.at("steps")) {
    std::map<std::string, rt::Tensor> Inputs;
    for (auto It = Step.at("inputs").begin(); It != Step.at("inputs").end(); ++It) {
      auto C = Carried.find(It.key());
      Inputs[It.key()] = C != Carried.end() ? C->second : optimium_test::readNpy(joinPath(Dir, It.value()));
    }
    Request.infer(Inputs);
    Request.wait();
    for (auto It = Step.at("outputs").begin(); It != Step.at("outputs").end(); ++It) {
      rt::Tensor Ref = optimium_test::readNpy(joinPath(Dir, It.value()));
      rt::Tensor Got = Request.getOutput(rt::StringRef(It.key()));
      Comparison C = compare(Got, Ref, Tolerance);
      R.MaxRelDiff = std::max(R.MaxRelDiff, C.RelDiff);
      if (!C.Ok)
        Problems << "step " << StepIndex << " output '" << It.key() << "': " << C.Problem << "; ";
    }
    Carried.clear();
    for (const auto &KV : State)
      Carried[KV.second] = Request.getOutput(rt::StringRef(KV.first)).clone();
    ++StepIndex;
  }
  R.Message = Problems.str();
  R.Status = R.Message.empty() ? "pass" : "fail";
}

std::set<std::string> splitList(const std::string &S) {
  std::set<std::string> Out;
  std::stringstream SS(S);
  std::string Item;
  while (std::getline(SS, Item, ','))
    if (!Item.empty())
      Out.insert(Item);
  return Out;
}

} // namespace

int main(int Argc, char **Argv) {
  std::string IndexPath, JsonPath;
  std::set<std::string> Only;
  int Threads = 0;
  for (int I = 1; I < Argc; ++I) {
    const std::string A = Argv[I];
    auto Value = [&](const char *Flag) -> std::string {
      if (I + 1 >= Argc) {
        std::cerr << Flag << " needs a value\n";
        std::exit(2);
      }
      return Argv[++I];
    };
    if (A == "--only")
      Only = splitList(Value("--only"));
    else if (A == "--json")
      JsonPath = Value("--json");
    else if (A == "--threads")
      Threads = std::stoi(Value("--threads"));
    else if (!A.empty() && A[0] != '-' && IndexPath.empty())
      IndexPath = A;
    else {
      std::cerr << "usage: optimium_corpus_runner INDEX.json [--only NAME,...] [--threads N] [--json REPORT.json]\n";
      return 2;
    }
  }
  if (IndexPath.empty()) {
    std::cerr << "usage: optimium_corpus_runner INDEX.json [--only NAME,...] [--threads N] [--json REPORT.json]\n";
    return 2;
  }
  json Index;
  try {
    std::ifstream F(IndexPath);
    if (!F)
      throw std::runtime_error("cannot open " + IndexPath);
    F >> Index;
  } catch (const std::exception &E) {
    std::cerr << IndexPath << ": " << E.what() << "\n";
    return 2;
  }
  const size_t Slash = IndexPath.find_last_of('/');
  const std::string Dir = Slash == std::string::npos ? "" : IndexPath.substr(0, Slash);

  rt::AutoInit Init;
  std::vector<CaseResult> Results;
  for (const json &Entry : Index.at("models")) {
    const std::string Name = Entry.at("name").get<std::string>();
    if (!Only.empty() && !Only.count(Name))
      continue;
    const double Tolerance = Entry.value("tolerance", 1e-3);
    const std::string Source = Entry.value("source", "");
    rt::Model M;
    std::string LoadError;
    try {
      rt::ModelLoadOptions O;
      O.ThreadCount = Threads;
      M = rt::loadModel(joinPath(Dir, Entry.at("model").get<std::string>()), O);
    } catch (const std::exception &E) {
      LoadError = std::string("load: ") + E.what();
    }
    if (Entry.contains("load_error")) {
      CaseResult R;
      R.Model = Name;
      R.Case = "load_error";
      std::string Missing;
      for (const json &Text : Entry.at("load_error"))
        if (LoadError.find(Text.get<std::string>()) == std::string::npos)
          Missing += (Missing.empty() ? "'" : ", '") + Text.get<std::string>() + "'";
      R.Status = !LoadError.empty() && Missing.empty() ? "pass" : "fail";
      if (LoadError.empty())
        R.Message = "loaded, but it must be refused";
      else if (!Missing.empty())
        R.Message = "the load error does not say " + Missing + ": " + LoadError;
      std::cout << (R.Status == "pass" ? "PASS " : "FAIL ") << Name << " / load_error";
      if (!Source.empty())
        std::cout << " [" << Source << "]";
      std::cout << "\n    " << (R.Message.empty() ? LoadError : R.Message) << std::endl;
      Results.push_back(R);
      continue;
    }
    for (const json &Case : Entry.at("cases")) {
      const auto CaseStart = std::chrono::steady_clock::now();
      CaseResult R;
      R.Model = Name;
      R.Case = Case.value("name", "");
      if (!LoadError.empty()) {
        R.Status = "error";
        R.Message = LoadError;
      } else {
        try {
          runCase(M, Dir, Case, Tolerance, R);
        } catch (const std::exception &E) {
          R.Status = "error";
          R.Message = E.what();
        }
      }
      const double Ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - CaseStart).count();
      std::cout << (R.Status == "pass" ? "PASS " : R.Status == "fail" ? "FAIL " : "ERROR ") << Name << " / " << R.Case
                << ": max rel diff " << R.MaxRelDiff << " (tolerance " << Tolerance << ")";
      if (!Source.empty())
        std::cout << " [" << Source << "]";
      if (!R.Message.empty())
        std::cout << "\n    " << R.Message;
      std::cout << " (" << static_cast<long>(Ms) << " ms)" << std::endl;
      Results.push_back(R);
    }
  }
  size_t Passed = 0;
  for (const CaseResult &R : Results)
    Passed += R.Status == "pass";
  std::cout << Passed << " passed, " << Results.size() - Passed << " failed" << std::endl;
  if (!JsonPath.empty()) {
    json Report = json::array();
    for (const CaseResult &R : Results)
      Report.push_back({{"model", R.Model}, {"case", R.Case}, {"status", R.Status}, {"message", R.Message},
                        {"max_rel_diff", R.MaxRelDiff}});
    std::ofstream(JsonPath) << Report.dump(1) << "\n";
  }
  return Passed == Results.size() ? 0 : 1;
}

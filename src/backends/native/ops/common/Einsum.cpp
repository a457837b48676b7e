// Einsum equation parsing (see Einsum.h).
#include "backends/native/ops/common/Einsum.h"

#include <algorithm>
#include <cctype>
#include <map>

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

namespace {

constexpr int EllipsisBase = 256;

/// Splits one term into letters, with -1 marking the ellipsis; false on bad characters.
bool parseTerm(const std::string &T, std::vector<int> &Out, bool &HasEllipsis) {
  HasEllipsis = false;
  for (size_t I = 0; I < T.size(); ++I) {
    if (T[I] == '.') {
      if (HasEllipsis || T.compare(I, 3, "...") != 0)
        return false;
      HasEllipsis = true;
      Out.push_back(-1);
      I += 2;
    } else if (std::isalpha(static_cast<unsigned char>(T[I]))) {
      Out.push_back(T[I]);
    } else {
      return false;
    }
  }
  return true;
}

} // namespace

Result<EinsumSpec> parseEinsum(const Node &N, const std::vector<size_t> &Ranks) {
  ASSIGN_OR_RETURN(std::string Eq, N.getString("equation", ""));
  Eq.erase(std::remove_if(Eq.begin(), Eq.end(), [](char C) { return std::isspace(static_cast<unsigned char>(C)); }),
           Eq.end());
  const auto Bad = [&](const std::string &Why) {
    return makeError(ErrorCode::Model, N.describe(), ": attribute 'equation' value '", Eq, "' ", Why);
  };
  if (Eq.empty())
    return Bad("is empty");
  const size_t Arrow = Eq.find("->");
  const std::string Lhs = Eq.substr(0, Arrow);
  std::vector<std::string> Terms;
  size_t Start = 0;
  while (true) {
    const size_t Comma = Lhs.find(',', Start);
    Terms.push_back(Lhs.substr(Start, Comma == std::string::npos ? std::string::npos : Comma - Start));
    if (Comma == std::string::npos)
      break;
    Start = Comma + 1;
  }
  if (Terms.size() != Ranks.size())
    return Bad("has " + std::to_string(Terms.size()) + " input terms for " + std::to_string(Ranks.size()) + " inputs");
  EinsumSpec S;
  size_t MaxEllipsis = 0;
  std::vector<std::vector<int>> Raw(Terms.size());
  std::vector<size_t> EllDims(Terms.size(), 0);
  for (size_t I = 0; I < Terms.size(); ++I) {
    bool Ell = false;
    if (!parseTerm(Terms[I], Raw[I], Ell))
      return Bad("has an invalid term '" + Terms[I] + "'");
    const size_t Letters = Raw[I].size() - (Ell ? 1 : 0);
    if (Ell ? Letters > Ranks[I] : Letters != Ranks[I])
      return Bad("term '" + Terms[I] + "' does not match input " + std::to_string(I) + " of rank " +
                 std::to_string(Ranks[I]));
    EllDims[I] = Ell ? Ranks[I] - Letters : 0;
    MaxEllipsis = std::max(MaxEllipsis, EllDims[I]);
  }
  std::map<int, int> Count;
  S.Inputs.assign(Terms.size(), {});
  for (size_t I = 0; I < Terms.size(); ++I)
    for (int L : Raw[I]) {
      if (L == -1) {
        for (size_t K = 0; K < EllDims[I]; ++K)
          S.Inputs[I].push_back(EllipsisBase + static_cast<int>(MaxEllipsis - EllDims[I] + K));
      } else {
        S.Inputs[I].push_back(L);
        ++Count[L];
      }
    }
  if (Arrow != std::string::npos) {
    std::vector<int> Out;
    bool Ell = false;
    if (!parseTerm(Eq.substr(Arrow + 2), Out, Ell))
      return Bad("has an invalid output term");
    for (int L : Out) {
      if (L == -1) {
        for (size_t K = 0; K < MaxEllipsis; ++K)
          S.Output.push_back(EllipsisBase + static_cast<int>(K));
      } else {
        if (!Count.count(L))
          return Bad(std::string("has output label '") + static_cast<char>(L) + "' that no input has");
        if (std::find(S.Output.begin(), S.Output.end(), L) != S.Output.end())
          return Bad(std::string("repeats output label '") + static_cast<char>(L) + "'");
        S.Output.push_back(L);
      }
    }
  } else {
    for (size_t K = 0; K < MaxEllipsis; ++K)
      S.Output.push_back(EllipsisBase + static_cast<int>(K));
    // Implicit output: letters used once, in alphabetical order (std::map orders them).
    for (const auto &KV : Count)
      if (KV.second == 1)
        S.Output.push_back(KV.first);
  }
  S.AllLabels = S.Output;
  for (const auto &In : S.Inputs)
    for (int L : In)
      if (std::find(S.AllLabels.begin(), S.AllLabels.end(), L) == S.AllLabels.end())
        S.AllLabels.push_back(L);
  return S;
}

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium

// Input shape binding (see InputShapes.h).
#include "exec/InputShapes.h"

namespace optimium {
namespace runtime {
namespace detail {

std::string dimsToString(const std::vector<int64_t> &Dims) {
  if (Dims.empty())
    return "scalar";
  std::string S;
  for (size_t I = 0; I < Dims.size(); ++I)
    S += (I ? "x" : "") + std::to_string(Dims[I]);
  return S;
}

std::string dimsText(const std::vector<int64_t> &Dims) {
  std::string S = "[";
  for (size_t I = 0; I < Dims.size(); ++I)
    S += (I ? "," : "") + std::to_string(Dims[I]);
  return S + "]";
}

size_t elementCountOf(const std::vector<int64_t> &Dims) {
  size_t N = 1;
  for (int64_t D : Dims)
    N *= static_cast<size_t>(D);
  return N;
}

Status bindInputShape(const Graph &G, size_t InputIndex, const TensorShape &Given, SymbolBindings &Symbols) {
  const Value &V = G.Values[G.Inputs[InputIndex]];
  const TensorShape &Declared = V.Shape;
  if (Given.getRank() != Declared.getRank())
    return makeError(ErrorCode::Shape, "input ", InputIndex, " ('", V.Name, "') has shape ", Given.toString(),
                     " of rank ", Given.getRank(), ", the model expects ", Declared.toString(), " of rank ",
                     Declared.getRank());
  for (size_t D = 0; D < Declared.getRank(); ++D) {
    const Expr &E = Declared[D];
    const Expr &X = Given[D];
    if (!X.isConst())
      continue;
    if (E.isConst()) {
      if (E.value() != X.value())
        return makeError(ErrorCode::Shape, "input ", InputIndex, " ('", V.Name, "') has shape ", Given.toString(),
                         ", the model expects ", Declared.toString(), " (dim ", D, " must be ", E.value(), ", got ",
                         X.value(), ")");
    } else if (E.isSymbol()) {
      auto Ins = Symbols.emplace(E.symbol(), std::make_pair(X.value(), InputIndex));
      const auto &Bound = Ins.first->second;
      if (!Ins.second && Bound.first != X.value()) {
        const Value &Other = G.Values[G.Inputs[Bound.second]];
        return makeError(ErrorCode::Shape, "input ", InputIndex, " ('", V.Name, "') dim ", D, ": symbol '",
                         E.symbol(), "' = ", X.value(), ", but input ", Bound.second, " ('", Other.Name, "') set '",
                         E.symbol(), "' = ", Bound.first, " (the model expects ", Declared.toString(), ")");
      }
    }
  }
  return Status::ok();
}

} // namespace detail
} // namespace runtime
} // namespace optimium

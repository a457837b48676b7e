// The mixed-radix FFT of Fft.h: plan (factors, twiddles) and the radix 2, 4, 8 and odd-prime
// (3, 5, 7, 11) passes. Every butterfly keeps the operation order of the reference decomposition
// (see Fft.h), so do not "simplify" the sums: the rounding is part of the contract.
#include "backends/native/ops/common/Fft.h"

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <utility>

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

template <typename T> using Cx = FftComplex<T>;

template <typename T> inline Cx<T> add(Cx<T> A, Cx<T> B) { return {A.Re + B.Re, A.Im + B.Im}; }
template <typename T> inline Cx<T> sub(Cx<T> A, Cx<T> B) { return {A.Re - B.Re, A.Im - B.Im}; }

/// A * -i (forward) or A * +i (inverse).
template <bool Fwd, typename T> inline Cx<T> rot90(Cx<T> A) { return Fwd ? Cx<T>{A.Im, -A.Re} : Cx<T>{-A.Im, A.Re}; }
/// A * exp(-+ i*pi/4); H = sqrt(1/2).
template <bool Fwd, typename T> inline Cx<T> rot45(Cx<T> A, T H) {
  return Fwd ? Cx<T>{H * (A.Re + A.Im), H * (A.Im - A.Re)} : Cx<T>{H * (A.Re - A.Im), H * (A.Im + A.Re)};
}
/// A * exp(-+ 3i*pi/4).
template <bool Fwd, typename T> inline Cx<T> rot135(Cx<T> A, T H) {
  return Fwd ? Cx<T>{H * (A.Im - A.Re), H * (-A.Re - A.Im)} : Cx<T>{H * (-A.Re - A.Im), H * (A.Re - A.Im)};
}
/// A * conj(W) (forward) or A * W (inverse); W is a root exp(+2*pi*i*x/N).
template <bool Fwd, typename T> inline Cx<T> twiddle(Cx<T> A, Cx<T> W) {
  return Fwd ? Cx<T>{A.Re * W.Re + A.Im * W.Im, A.Im * W.Re - A.Re * W.Im}
             : Cx<T>{A.Re * W.Re - A.Im * W.Im, A.Re * W.Im + A.Im * W.Re};
}

/// The roots exp(+2*pi*i * x/N), x < N, evaluated in double the way the reference does: each is the
/// product of an entry of a fine table (x mod 2^s) and of a coarse one (x div 2^s), and every table
/// entry is a cos/sin of an angle folded to at most pi/4. The float roots are these doubles rounded.
class RootTable {
public:
  explicit RootTable(uint64_t Count) : N(Count) {
    const double Unit = static_cast<double>(0.25L * 3.141592653589793238462643383279502884197L / N);
    const uint64_t Values = (N + 2) / 2; // x <= N/2; the rest are conjugates
    while ((uint64_t(1) << Shift) * (uint64_t(1) << Shift) < Values)
      ++Shift;
    Mask = (uint64_t(1) << Shift) - 1;
    Fine.resize(Mask + 1);
    Fine[0] = {1.0, 0.0};
    for (uint64_t I = 1; I < Fine.size(); ++I)
      Fine[I] = folded(I, Unit);
    Coarse.resize((Values + Mask) / (Mask + 1));
    Coarse[0] = {1.0, 0.0};
    for (uint64_t I = 1; I < Coarse.size(); ++I)
      Coarse[I] = folded(I * (Mask + 1), Unit);
  }

  template <typename T> Cx<T> at(uint64_t X) const {
    const bool Upper = 2 * X > N; // exp(2*pi*i*x/N) = conj(exp(2*pi*i*(N-x)/N))
    const uint64_t Y = Upper ? N - X : X;
    const Cx<double> A = Fine[Y & Mask], B = Coarse[Y >> Shift];
    const T Re = static_cast<T>(A.Re * B.Re - A.Im * B.Im), Im = static_cast<T>(A.Re * B.Im + A.Im * B.Re);
    return {Re, Upper ? -Im : Im};
  }

private:
  /// cos, sin of x * 2*pi/N with the angle folded into [0, pi/4] (Unit = (pi/4)/N).
  Cx<double> folded(uint64_t X, double Unit) const {
    uint64_t E = X << 3; // the angle in Units
    const auto cs = [&](uint64_t U, bool Swap, double SignC, double SignS) {
      const double A = static_cast<double>(U) * Unit;
      const double C = std::cos(A), S = std::sin(A);
      return Swap ? Cx<double>{SignC * S, SignS * C} : Cx<double>{SignC * C, SignS * S};
    };
    if (E < 4 * N) { // upper half plane
      if (E < 2 * N)
        return E < N ? cs(E, false, 1, 1) : cs(2 * N - E, true, 1, 1);
      E -= 2 * N;
      return E < N ? cs(E, true, -1, 1) : cs(2 * N - E, false, -1, 1);
    }
    E = 8 * N - E;
    if (E < 2 * N)
      return E < N ? cs(E, false, 1, -1) : cs(2 * N - E, true, 1, -1);
    E -= 2 * N;
    return E < N ? cs(E, true, -1, -1) : cs(2 * N - E, false, -1, -1);
  }

  uint64_t N, Shift = 1, Mask = 0;
  std::vector<Cx<double>> Fine, Coarse;
};

template <bool Fwd, typename T> inline void butterfly2(const Cx<T> *In, Cx<T> *Out) {
  Out[0] = add(In[0], In[1]);
  Out[1] = sub(In[0], In[1]);
}

template <bool Fwd, typename T> inline void butterfly4(const Cx<T> *In, Cx<T> *Out) {
  const Cx<T> T2 = add(In[0], In[2]), T1 = sub(In[0], In[2]), T3 = add(In[1], In[3]);
  const Cx<T> T4 = rot90<Fwd>(sub(In[1], In[3]));
  Out[0] = add(T2, T3);
  Out[2] = sub(T2, T3);
  Out[1] = add(T1, T4);
  Out[3] = sub(T1, T4);
}

template <bool Fwd, typename T> inline void butterfly8(const Cx<T> *In, Cx<T> *Out) {
  const T H = static_cast<T>(0.707106781186547524400844362104849039L);
  Cx<T> A1 = add(In[1], In[5]), A5 = sub(In[1], In[5]), A3 = add(In[3], In[7]), A7 = sub(In[3], In[7]);
  const Cx<T> S13 = add(A1, A3);
  A3 = rot90<Fwd>(sub(A1, A3));
  A1 = S13;
  A7 = rot90<Fwd>(A7);
  const Cx<T> S57 = add(A5, A7);
  A7 = rot135<Fwd>(sub(A5, A7), H);
  A5 = rot45<Fwd>(S57, H);
  const Cx<T> A0 = add(In[0], In[4]), A4 = sub(In[0], In[4]), A2 = add(In[2], In[6]);
  const Cx<T> A6 = rot90<Fwd>(sub(In[2], In[6]));
  const Cx<T> E0 = add(A0, A2), E2 = sub(A0, A2), E4 = add(A4, A6), E6 = sub(A4, A6);
  Out[0] = add(E0, A1);
  Out[4] = sub(E0, A1);
  Out[2] = add(E2, A3);
  Out[6] = sub(E2, A3);
  Out[1] = add(E4, A5);
  Out[5] = sub(E4, A5);
  Out[3] = add(E6, A7);
  Out[7] = sub(E6, A7);
}

/// Radix P (odd prime): pairs In[m] +- In[P-m], then per output pair u, P-u the cosine part
/// In[0] + sum_m cos(2*pi*u*m/P) * sum_m and the sine part sum_m sin(2*pi*u*m/P) * diff_m, each
/// summed left to right. Cos / Sin hold cos, sin of 2*pi*k/P for k <= (P-1)/2.
template <int P, bool Fwd, typename T> inline void butterflyOdd(const Cx<T> *In, Cx<T> *Out, const T *Cos, const T *Sin) {
  constexpr int Half = (P - 1) / 2;
  Cx<T> Sum[Half + 1], Diff[Half + 1];
  for (int M = 1; M <= Half; ++M) {
    Sum[M] = add(In[M], In[P - M]);
    Diff[M] = sub(In[M], In[P - M]);
  }
  Cx<T> Zero = In[0];
  for (int M = 1; M <= Half; ++M)
    Zero = add(Zero, Sum[M]);
  Out[0] = Zero;
  for (int U = 1; U <= Half; ++U) {
    Cx<T> Ca = In[0];
    T Bi = 0, Br = 0;
    for (int M = 1; M <= Half; ++M) {
      const int K = (U * M) % P;
      const T C = K <= Half ? Cos[K] : Cos[P - K];
      const T Sn = (K <= Half ? Sin[K] : -Sin[P - K]) * (Fwd ? T(-1) : T(1));
      Ca.Re = Ca.Re + C * Sum[M].Re;
      Ca.Im = Ca.Im + C * Sum[M].Im;
      if (M == 1) {
        Bi = Sn * Diff[M].Re;
        Br = Sn * Diff[M].Im;
      } else {
        Bi = Bi + Sn * Diff[M].Re;
        Br = Br + Sn * Diff[M].Im;
      }
    }
    const Cx<T> Cb{-Br, Bi};
    Out[U] = add(Ca, Cb);
    Out[P - U] = sub(Ca, Cb);
  }
}

/// One pass of radix P: input element (i, m, k) is Src[i + Ido*(m + P*k)], output (i, k, j) is
/// Dst[i + Ido*(k + L1*j)], outputs j > 0 with i > 0 times twiddle W[(j-1)*(Ido-1) + i-1].
template <int P, bool Fwd, typename T, typename Butterfly>
void runPass(int64_t L1, int64_t Ido, const Cx<T> *Src, Cx<T> *Dst, const Cx<T> *W, Butterfly B) {
  Cx<T> In[P], Out[P];
  for (int64_t K = 0; K < L1; ++K)
    for (int64_t I = 0; I < Ido; ++I) {
      for (int M = 0; M < P; ++M)
        In[M] = Src[I + Ido * (M + P * K)];
      B(In, Out);
      Dst[I + Ido * K] = Out[0];
      for (int J = 1; J < P; ++J)
        Dst[I + Ido * (K + L1 * J)] = I == 0 ? Out[J] : twiddle<Fwd>(Out[J], W[(J - 1) * (Ido - 1) + I - 1]);
    }
}

/// cos and sin of 2*pi*k/P, k = 1 .. (P-1)/2, rounded from these literals to T.
template <int P> struct OddRoots;
template <> struct OddRoots<3> {
  static constexpr long double Cos[] = {-0.5L};
  static constexpr long double Sin[] = {0.866025403784438646763723170752936183L};
};
template <> struct OddRoots<5> {
  static constexpr long double Cos[] = {0.309016994374947424102293417182819059L, -0.809016994374947424102293417182819059L};
  static constexpr long double Sin[] = {0.951056516295153572116439333379382143L, 0.587785252292473129168705954639072769L};
};
template <> struct OddRoots<7> {
  static constexpr long double Cos[] = {0.623489801858733530525004884004239811L, -0.222520933956314404288902564496794759L,
                                        -0.900968867902419126236102319507445051L};
  static constexpr long double Sin[] = {0.781831482468029808708444526674057750L, 0.974927912181823607018131682993931217L,
                                        0.433883739117558120475768332848358755L};
};
template <> struct OddRoots<11> {
  static constexpr long double Cos[] = {0.841253532831181168861811648919367718L, 0.415415013001886425529274149229623204L,
                                        -0.142314838273285140443792668616369669L, -0.654860733945285064056925072466293553L,
                                        -0.959492973614497389890368057066327699L};
  static constexpr long double Sin[] = {0.540640817455597582107635954318691695L, 0.909631995354518371411715383079028460L,
                                        0.989821441880932732376092037776718787L, 0.755749574354258283774035843972344420L,
                                        0.281732556841429697711417915346616899L};
};

template <int P, typename T> struct OddConstants {
  T Cos[(P - 1) / 2 + 1], Sin[(P - 1) / 2 + 1]; ///< index k; entry 0 unused
  OddConstants() {
    Cos[0] = 1;
    Sin[0] = 0;
    for (int K = 1; K <= (P - 1) / 2; ++K) {
      Cos[K] = static_cast<T>(OddRoots<P>::Cos[K - 1]);
      Sin[K] = static_cast<T>(OddRoots<P>::Sin[K - 1]);
    }
  }
};

template <int P, bool Fwd, typename T>
void runOddPass(int64_t L1, int64_t Ido, const Cx<T> *Src, Cx<T> *Dst, const Cx<T> *W) {
  static const OddConstants<P, T> C;
  runPass<P, Fwd>(L1, Ido, Src, Dst, W,
                  [](const Cx<T> *In, Cx<T> *Out) { butterflyOdd<P, Fwd>(In, Out, C.Cos, C.Sin); });
}

std::vector<int64_t> factorize(int64_t N) {
  std::vector<int64_t> F;
  int64_t Len = N;
  while (Len % 8 == 0) {
    F.push_back(8);
    Len /= 8;
  }
  while (Len % 4 == 0) {
    F.push_back(4);
    Len /= 4;
  }
  if (Len % 2 == 0) { // a single 2 runs first: it trades places with the first factor
    Len /= 2;
    F.push_back(2);
    std::swap(F.front(), F.back());
  }
  for (int64_t D = 3; D * D <= Len; D += 2)
    while (Len % D == 0) {
      F.push_back(D);
      Len /= D;
    }
  if (Len > 1)
    F.push_back(Len);
  return F;
}

} // namespace

template <typename T> bool FftPlan<T>::supports(int64_t N) {
  if (N < 1)
    return false;
  for (const int64_t P : {2, 3, 5, 7, 11})
    while (N % P == 0)
      N /= P;
  return N == 1;
}

template <typename T> FftPlan<T>::FftPlan(int64_t Length) : N(Length) {
  if (N <= 1)
    return;
  const RootTable Roots(static_cast<uint64_t>(N));
  int64_t L1 = 1;
  for (const int64_t P : factorize(N)) {
    Pass Ps;
    Ps.Radix = P;
    Ps.L1 = L1;
    Ps.Ido = N / (L1 * P);
    Ps.TwiddleOffset = Twiddles.size();
    for (int64_t J = 1; J < P; ++J)
      for (int64_t I = 1; I < Ps.Ido; ++I)
        Twiddles.push_back(Roots.at<T>(static_cast<uint64_t>(J * L1 * I)));
    Passes.push_back(Ps);
    L1 *= P;
  }
}

template <typename T> std::vector<int64_t> FftPlan<T>::radices() const {
  std::vector<int64_t> R;
  for (const Pass &Ps : Passes)
    R.push_back(Ps.Radix);
  return R;
}

template <typename T> void FftPlan<T>::transform(FftComplex<T> *Data, FftComplex<T> *Work, bool Inverse, T Scale) const {
  Cx<T> *Src = Data, *Dst = Work;
  const auto run = [&](auto FwdTag) {
    constexpr bool Fwd = decltype(FwdTag)::value;
    for (const Pass &Ps : Passes) {
      const Cx<T> *W = Twiddles.data() + Ps.TwiddleOffset;
      switch (Ps.Radix) {
      case 2:
        runPass<2, Fwd>(Ps.L1, Ps.Ido, Src, Dst, W, [](const Cx<T> *In, Cx<T> *Out) { butterfly2<Fwd>(In, Out); });
        break;
      case 4:
        runPass<4, Fwd>(Ps.L1, Ps.Ido, Src, Dst, W, [](const Cx<T> *In, Cx<T> *Out) { butterfly4<Fwd>(In, Out); });
        break;
      case 8:
        runPass<8, Fwd>(Ps.L1, Ps.Ido, Src, Dst, W, [](const Cx<T> *In, Cx<T> *Out) { butterfly8<Fwd>(In, Out); });
        break;
      case 3:
        runOddPass<3, Fwd>(Ps.L1, Ps.Ido, Src, Dst, W);
        break;
      case 5:
        runOddPass<5, Fwd>(Ps.L1, Ps.Ido, Src, Dst, W);
        break;
      case 7:
        runOddPass<7, Fwd>(Ps.L1, Ps.Ido, Src, Dst, W);
        break;
      default: // 11: supports() admits nothing else
        runOddPass<11, Fwd>(Ps.L1, Ps.Ido, Src, Dst, W);
        break;
      }
      std::swap(Src, Dst);
    }
  };
  if (Inverse)
    run(std::false_type());
  else
    run(std::true_type());
  const size_t Count = static_cast<size_t>(N);
  if (Src != Data) {
    for (size_t I = 0; I < Count; ++I)
      Data[I] = {Src[I].Re * Scale, Src[I].Im * Scale};
  } else if (Scale != T(1)) {
    for (size_t I = 0; I < Count; ++I)
      Data[I] = {Data[I].Re * Scale, Data[I].Im * Scale};
  }
}

template class FftPlan<float>;
template class FftPlan<double>;

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium

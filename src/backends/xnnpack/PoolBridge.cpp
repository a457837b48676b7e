// XNNPACK's pthreadpool calls served by the runtime's pool (see PoolBridge.h).
#include "PoolBridge.h"

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <functional>

namespace optimium {
namespace xnnpack_ext {

namespace {

thread_local const OptRtExecContext *Current = nullptr;
std::atomic<unsigned long> Splits{0};

bool pooled() { return Current && Current->parallel_for && Current->num_threads > 1; }

void rangeThunk(void *User, size_t Begin, size_t End) {
  const auto &Fn = *static_cast<const std::function<void(size_t)> *>(User);
  for (size_t I = Begin; I < End; ++I)
    Fn(I);
}

/// Runs Fn(0..Total-1) on the runtime's pool when a run is in progress on this thread.
void runTiles(size_t Total, const std::function<void(size_t)> &Fn) {
  if (Total > 1 && pooled()) {
    Splits.fetch_add(1, std::memory_order_relaxed);
    Current->parallel_for(Current->pool, Total, 1, &rangeThunk, const_cast<std::function<void(size_t)> *>(&Fn));
    return;
  }
  for (size_t I = 0; I < Total; ++I)
    Fn(I);
}

size_t tiles(size_t Range, size_t Tile) { return Tile == 0 ? 0 : (Range + Tile - 1) / Tile; }

/// libpthreadpool's own function Name, for a real (non-NULL) pool someone else passes.
template <typename Fn> Fn realFunction(const char *Name) { return reinterpret_cast<Fn>(::dlsym(RTLD_NEXT, Name)); }

#define FORWARD_REAL(Name, Type, ...)                                                                  \
  do {                                                                                                 \
    if (Pool) {                                                                                        \
      static const auto Real = realFunction<Type>(#Name);                                              \
      if (Real) {                                                                                      \
        Real(Pool, __VA_ARGS__);                                                                       \
        return;                                                                                        \
      }                                                                                                \
    }                                                                                                  \
  } while (0)

} // namespace

ScopedPool::ScopedPool(const OptRtExecContext *Ctx) : Prev(Current) { Current = Ctx; }
ScopedPool::~ScopedPool() { Current = Prev; }

unsigned long poolSplits() { return Splits.load(std::memory_order_relaxed); }

} // namespace xnnpack_ext
} // namespace optimium

using optimium::xnnpack_ext::runTiles;
using optimium::xnnpack_ext::tiles;
using optimium::xnnpack_ext::realFunction;

extern "C" {

__attribute__((visibility("default"))) size_t pthreadpool_get_threads_count(pthreadpool_t Pool) {
  if (Pool) {
    static const auto Real = realFunction<size_t (*)(pthreadpool_t)>("pthreadpool_get_threads_count");
    return Real ? Real(Pool) : 1;
  }
  return optimium::xnnpack_ext::pooled() ? static_cast<size_t>(optimium::xnnpack_ext::Current->num_threads) : 1;
}

__attribute__((visibility("default"))) void pthreadpool_parallelize_1d(pthreadpool_t Pool, pthreadpool_task_1d_t F,
                                                                         void *C, size_t R, uint32_t Flags) {
  using T = void (*)(pthreadpool_t, pthreadpool_task_1d_t, void *, size_t, uint32_t);
  FORWARD_REAL(pthreadpool_parallelize_1d, T, F, C, R, Flags);
  runTiles(R, [&](size_t I) { F(C, I); });
}

__attribute__((visibility("default"))) void pthreadpool_parallelize_1d_tile_1d(pthreadpool_t Pool,
                                                                                 pthreadpool_task_1d_tile_1d_t F, void *C,
                                                                                 size_t R, size_t Tile, uint32_t Flags) {
  using T = void (*)(pthreadpool_t, pthreadpool_task_1d_tile_1d_t, void *, size_t, size_t, uint32_t);
  FORWARD_REAL(pthreadpool_parallelize_1d_tile_1d, T, F, C, R, Tile, Flags);
  runTiles(tiles(R, Tile), [&](size_t I) {
    const size_t S = I * Tile;
    F(C, S, std::min(Tile, R - S));
  });
}

__attribute__((visibility("default"))) void pthreadpool_parallelize_2d(pthreadpool_t Pool, pthreadpool_task_2d_t F,
                                                                         void *C, size_t RI, size_t RJ, uint32_t Flags) {
  using T = void (*)(pthreadpool_t, pthreadpool_task_2d_t, void *, size_t, size_t, uint32_t);
  FORWARD_REAL(pthreadpool_parallelize_2d, T, F, C, RI, RJ, Flags);
  runTiles(RI * RJ, [&](size_t I) { F(C, I / RJ, I % RJ); });
}

__attribute__((visibility("default"))) void pthreadpool_parallelize_2d_tile_1d(pthreadpool_t Pool,
                                                                                 pthreadpool_task_2d_tile_1d_t F, void *C,
                                                                                 size_t RI, size_t RJ, size_t TJ,
                                                                                 uint32_t Flags) {
  using T = void (*)(pthreadpool_t, pthreadpool_task_2d_tile_1d_t, void *, size_t, size_t, size_t, uint32_t);
  FORWARD_REAL(pthreadpool_parallelize_2d_tile_1d, T, F, C, RI, RJ, TJ, Flags);
  const size_t NJ = tiles(RJ, TJ);
  runTiles(RI * NJ, [&](size_t I) {
    const size_t J = (I % NJ) * TJ;
    F(C, I / NJ, J, std::min(TJ, RJ - J));
  });
}

__attribute__((visibility("default"))) void pthreadpool_parallelize_2d_tile_2d(pthreadpool_t Pool,
                                                                                 pthreadpool_task_2d_tile_2d_t F, void *C,
                                                                                 size_t RI, size_t RJ, size_t TI, size_t TJ,
                                                                                 uint32_t Flags) {
  using T = void (*)(pthreadpool_t, pthreadpool_task_2d_tile_2d_t, void *, size_t, size_t, size_t, size_t, uint32_t);
  FORWARD_REAL(pthreadpool_parallelize_2d_tile_2d, T, F, C, RI, RJ, TI, TJ, Flags);
  const size_t NJ = tiles(RJ, TJ);
  runTiles(tiles(RI, TI) * NJ, [&](size_t I) {
    const size_t A = (I / NJ) * TI, B = (I % NJ) * TJ;
    F(C, A, B, std::min(TI, RI - A), std::min(TJ, RJ - B));
  });
}

__attribute__((visibility("default"))) void pthreadpool_parallelize_3d(pthreadpool_t Pool, pthreadpool_task_3d_t F,
                                                                         void *C, size_t RI, size_t RJ, size_t RK,
                                                                         uint32_t Flags) {
  using T = void (*)(pthreadpool_t, pthreadpool_task_3d_t, void *, size_t, size_t, size_t, uint32_t);
  FORWARD_REAL(pthreadpool_parallelize_3d, T, F, C, RI, RJ, RK, Flags);
  runTiles(RI * RJ * RK, [&](size_t I) { F(C, I / (RJ * RK), (I / RK) % RJ, I % RK); });
}

__attribute__((visibility("default"))) void pthreadpool_parallelize_3d_tile_2d(pthreadpool_t Pool,
                                                                                 pthreadpool_task_3d_tile_2d_t F, void *C,
                                                                                 size_t RI, size_t RJ, size_t RK, size_t TJ,
                                                                                 size_t TK, uint32_t Flags) {
  using T = void (*)(pthreadpool_t, pthreadpool_task_3d_tile_2d_t, void *, size_t, size_t, size_t, size_t, size_t,
                     uint32_t);
  FORWARD_REAL(pthreadpool_parallelize_3d_tile_2d, T, F, C, RI, RJ, RK, TJ, TK, Flags);
  const size_t NJ = tiles(RJ, TJ), NK = tiles(RK, TK);
  runTiles(RI * NJ * NK, [&](size_t I) {
    const size_t J = ((I / NK) % NJ) * TJ, K = (I % NK) * TK;
    F(C, I / (NJ * NK), J, K, std::min(TJ, RJ - J), std::min(TK, RK - K));
  });
}

__attribute__((visibility("default"))) void pthreadpool_parallelize_4d(pthreadpool_t Pool, pthreadpool_task_4d_t F,
                                                                         void *C, size_t RI, size_t RJ, size_t RK,
                                                                         size_t RL, uint32_t Flags) {
  using T = void (*)(pthreadpool_t, pthreadpool_task_4d_t, void *, size_t, size_t, size_t, size_t, uint32_t);
  FORWARD_REAL(pthreadpool_parallelize_4d, T, F, C, RI, RJ, RK, RL, Flags);
  runTiles(RI * RJ * RK * RL, [&](size_t I) {
    F(C, I / (RJ * RK * RL), (I / (RK * RL)) % RJ, (I / RL) % RK, I % RL);
  });
}

__attribute__((visibility("default"))) void pthreadpool_parallelize_4d_tile_2d(pthreadpool_t Pool,
                                                                                 pthreadpool_task_4d_tile_2d_t F, void *C,
                                                                                 size_t RI, size_t RJ, size_t RK, size_t RL,
                                                                                 size_t TK, size_t TL, uint32_t Flags) {
  using T = void (*)(pthreadpool_t, pthreadpool_task_4d_tile_2d_t, void *, size_t, size_t, size_t, size_t, size_t,
                     size_t, uint32_t);
  FORWARD_REAL(pthreadpool_parallelize_4d_tile_2d, T, F, C, RI, RJ, RK, RL, TK, TL, Flags);
  const size_t NK = tiles(RK, TK), NL = tiles(RL, TL);
  runTiles(RI * RJ * NK * NL, [&](size_t I) {
    const size_t K = ((I / NL) % NK) * TK, L = (I % NL) * TL;
    F(C, I / (RJ * NK * NL), (I / (NK * NL)) % RJ, K, L, std::min(TK, RK - K), std::min(TL, RL - L));
  });
}

__attribute__((visibility("default"))) void pthreadpool_parallelize_5d(pthreadpool_t Pool, pthreadpool_task_5d_t F,
                                                                         void *C, size_t RI, size_t RJ, size_t RK,
                                                                         size_t RL, size_t RM, uint32_t Flags) {
  using T = void (*)(pthreadpool_t, pthreadpool_task_5d_t, void *, size_t, size_t, size_t, size_t, size_t, uint32_t);
  FORWARD_REAL(pthreadpool_parallelize_5d, T, F, C, RI, RJ, RK, RL, RM, Flags);
  runTiles(RI * RJ * RK * RL * RM, [&](size_t I) {
    F(C, I / (RJ * RK * RL * RM), (I / (RK * RL * RM)) % RJ, (I / (RL * RM)) % RK, (I / RM) % RL, I % RM);
  });
}

__attribute__((visibility("default"))) void pthreadpool_parallelize_5d_tile_2d(pthreadpool_t Pool,
                                                                                 pthreadpool_task_5d_tile_2d_t F, void *C,
                                                                                 size_t RI, size_t RJ, size_t RK, size_t RL,
                                                                                 size_t RM, size_t TL, size_t TM,
                                                                                 uint32_t Flags) {
  using T = void (*)(pthreadpool_t, pthreadpool_task_5d_tile_2d_t, void *, size_t, size_t, size_t, size_t, size_t,
                     size_t, size_t, uint32_t);
  FORWARD_REAL(pthreadpool_parallelize_5d_tile_2d, T, F, C, RI, RJ, RK, RL, RM, TL, TM, Flags);
  const size_t NL = tiles(RL, TL), NM = tiles(RM, TM);
  runTiles(RI * RJ * RK * NL * NM, [&](size_t I) {
    const size_t L = ((I / NM) % NL) * TL, M = (I % NM) * TM;
    F(C, I / (RJ * RK * NL * NM), (I / (RK * NL * NM)) % RJ, (I / (NL * NM)) % RK, L, M, std::min(TL, RL - L),
      std::min(TM, RM - M));
  });
}

__attribute__((visibility("default"))) void pthreadpool_parallelize_6d_tile_2d(pthreadpool_t Pool,
                                                                                 pthreadpool_task_6d_tile_2d_t F, void *C,
                                                                                 size_t RI, size_t RJ, size_t RK, size_t RL,
                                                                                 size_t RM, size_t RN, size_t TM, size_t TN,
                                                                                 uint32_t Flags) {
  using T = void (*)(pthreadpool_t, pthreadpool_task_6d_tile_2d_t, void *, size_t, size_t, size_t, size_t, size_t,
                     size_t, size_t, size_t, uint32_t);
  FORWARD_REAL(pthreadpool_parallelize_6d_tile_2d, T, F, C, RI, RJ, RK, RL, RM, RN, TM, TN, Flags);
  const size_t NM = tiles(RM, TM), NN = tiles(RN, TN);
  runTiles(RI * RJ * RK * RL * NM * NN, [&](size_t I) {
    const size_t M = ((I / NN) % NM) * TM, N = (I % NN) * TN;
    F(C, I / (RJ * RK * RL * NM * NN), (I / (RK * RL * NM * NN)) % RJ, (I / (RL * NM * NN)) % RK,
      (I / (NM * NN)) % RL, M, N, std::min(TM, RM - M), std::min(TN, RN - N));
  });
}

} // extern "C"

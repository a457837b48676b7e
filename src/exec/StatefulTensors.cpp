// Preserved and Resizable tensors of a request (spec section 10): capacity-sized double buffers,
// lazy/eager shape application with content migration, ShrinkToFit, and the post-run swap that
// makes each update_from output the next value of its input.
#include <algorithm>
#include <cstring>

#include "Optimium/Runtime/Exceptions.h"
#include "core/ErrorConversion.h"
#include "exec/InputShapes.h"
#include "exec/Request.h"

namespace optimium {
namespace runtime {

using namespace detail;

namespace {

/// Index-preserving row-major copy of the overlap of Src (shape SD) into Dst (shape DD, same rank);
/// elements of Dst outside the overlap are left as they are.
void copyOverlap(const char *Src, const std::vector<int64_t> &SD, char *Dst, const std::vector<int64_t> &DD,
                 size_t ElemSize, size_t Axis = 0) {
  const size_t Rank = SD.size();
  if (Rank == 0) {
    std::memcpy(Dst, Src, ElemSize);
    return;
  }
  const int64_t N = std::min(SD[Axis], DD[Axis]);
  if (Axis + 1 == Rank) {
    if (N > 0)
      std::memcpy(Dst, Src, static_cast<size_t>(N) * ElemSize);
    return;
  }
  size_t SStride = ElemSize, DStride = ElemSize;
  for (size_t A = Axis + 1; A < Rank; ++A) {
    SStride *= static_cast<size_t>(SD[A]);
    DStride *= static_cast<size_t>(DD[A]);
  }
  for (int64_t I = 0; I < N; ++I)
    copyOverlap(Src + I * SStride, SD, Dst + I * DStride, DD, ElemSize, Axis + 1);
}

std::shared_ptr<Buffer> allocateZeroed(size_t Bytes) {
  auto B = Buffer::allocate(Bytes);
  if (B && Bytes)
    std::memset(B->Data, 0, Bytes);
  return B;
}

} // namespace

Status RequestImpl::initStateful() {
  const Graph &G = *M->G;
  States.assign(M->Stateful.size(), StatefulState());
  for (size_t SI = 0; SI < M->Stateful.size(); ++SI) {
    const StatefulInput &S = M->Stateful[SI];
    StatefulState &St = States[SI];
    St.Dims = S.BaseDims;
    St.Cap = S.DeclaredCap.empty() ? S.BaseDims : S.DeclaredCap;
    if (!S.Preserved)
      continue;
    const size_t Bytes = elementCountOf(St.Cap) * getElementSize(G.Values[S.Value].Type);
    St.Cur = allocateZeroed(Bytes);
    St.Spare = allocateZeroed(Bytes);
    if (!St.Cur || !St.Spare)
      return makeError(ErrorCode::OutOfResource, "cannot allocate ", Bytes, " bytes for preserved tensor '",
                       G.Values[S.Value].Name, "'");
  }
  return Status::ok();
}

Tensor RequestImpl::preservedTensor(size_t SI) const {
  const StatefulInput &S = M->Stateful[SI];
  return makeTensorView(M->G->Values[S.Value].Type, States[SI].Dims, States[SI].Cur, 0);
}

void RequestImpl::applyShapeChangesLocked(bool ShrinkToFit) {
  const Graph &G = *M->G;
  const size_t NS = M->Stateful.size();
  // Shrinking is a no-op on a symbolic-dynamic model: its capacities are managed per run.
  ShrinkToFit = ShrinkToFit && !M->Dynamic;
  struct Change {
    std::vector<int64_t> Dims, Cap;
    bool Reshape = false, Realloc = false;
    std::shared_ptr<Buffer> Content, NewCur, NewSpare;
  };
  std::vector<Change> Changes(NS);
  bool Any = false;
  for (size_t SI = 0; SI < NS; ++SI) {
    const StatefulInput &S = M->Stateful[SI];
    StatefulState &St = States[SI];
    Change &C = Changes[SI];
    C.Dims = St.HasPending ? St.Pending : St.Dims;
    C.Cap = St.Cap;
    if (elementCountOf(C.Dims) > elementCountOf(St.Cap))
      C.Cap = C.Dims; // overflow (never beyond a declared capacity: setTensorShape refused that)
    if (ShrinkToFit && S.Resizable) {
      const std::vector<int64_t> &Floor = S.DeclaredCap.empty() ? S.BaseDims : S.DeclaredCap;
      const std::vector<int64_t> &Target = elementCountOf(C.Dims) > elementCountOf(Floor) ? C.Dims : Floor;
      if (elementCountOf(Target) != elementCountOf(C.Cap))
        C.Cap = Target;
    }
    C.Reshape = C.Dims != St.Dims;
    C.Realloc = S.Preserved && elementCountOf(C.Cap) != elementCountOf(St.Cap);
    if (!S.Preserved && C.Cap != St.Cap)
      C.Realloc = false;
    Any |= C.Reshape || C.Realloc || C.Cap != St.Cap;
  }
  if (!Any) {
    for (StatefulState &St : States)
      St.HasPending = false;
    return;
  }

  // 1. Allocate everything first: a failure leaves the request as it was (marked dirty).
  for (size_t SI = 0; SI < NS; ++SI) {
    const StatefulInput &S = M->Stateful[SI];
    Change &C = Changes[SI];
    if (!S.Preserved || (!C.Reshape && !C.Realloc))
      continue;
    const size_t Elem = getElementSize(G.Values[S.Value].Type);
    C.Content = allocateZeroed(elementCountOf(C.Dims) * Elem);
    if (C.Realloc) {
      C.NewCur = allocateZeroed(elementCountOf(C.Cap) * Elem);
      C.NewSpare = C.NewCur ? Buffer::allocate(elementCountOf(C.Cap) * Elem) : nullptr;
    }
    if (!C.Content || (C.Realloc && (!C.NewCur || !C.NewSpare))) {
      Dirty = true;
      for (StatefulState &St : States)
        St.HasPending = false;
      throwIfError(makeError(ErrorCode::OutOfResource, "applyShapeChanges: cannot allocate ", elementCountOf(C.Cap) * Elem,
                             " bytes for preserved tensor '", G.Values[S.Value].Name, "' of shape ", dimsText(C.Dims)));
    }
  }

  // 2. Migrate into the fresh content buffers; the current values are untouched until step 3, so
  //    a throwing callback leaves the cache as it was.
  for (size_t SI = 0; SI < NS; ++SI) {
    const StatefulInput &S = M->Stateful[SI];
    StatefulState &St = States[SI];
    Change &C = Changes[SI];
    if (!C.Content)
      continue;
    const ElementType Type = G.Values[S.Value].Type;
    if (St.Migrate) {
      const Tensor Old = makeTensorView(Type, St.Dims, St.Cur, 0);
      Tensor New = makeTensorView(Type, C.Dims, C.Content, 0);
      try {
        St.Migrate(Old, New);
      } catch (...) {
        State = InferStatus::Fault;
        Error = std::current_exception();
        throw;
      }
    } else {
      copyOverlap(static_cast<const char *>(St.Cur->Data), St.Dims, static_cast<char *>(C.Content->Data), C.Dims,
                  getElementSize(Type));
    }
  }

  // 3. Commit. Within capacity the value stays at the same address (rewritten in place);
  //    a reallocation retains the previous buffers until releaseStaleShapeMemory().
  bool Reallocated = false;
  for (size_t SI = 0; SI < NS; ++SI) {
    const StatefulInput &S = M->Stateful[SI];
    StatefulState &St = States[SI];
    Change &C = Changes[SI];
    if (C.Realloc) {
      Stale.push_back(std::move(St.Cur));
      Stale.push_back(std::move(St.Spare));
      St.Cur = std::move(C.NewCur);
      St.Spare = std::move(C.NewSpare);
      Reallocated = true;
    }
    if (C.Content) {
      const size_t Bytes = elementCountOf(C.Dims) * getElementSize(G.Values[S.Value].Type);
      if (Bytes)
        std::memcpy(St.Cur->Data, C.Content->Data, Bytes);
    }
    St.Dims = C.Dims;
    St.Cap = C.Cap;
    St.HasPending = false;
  }
  if (ShrinkToFit && Reallocated)
    Stale.clear();
}

Status RequestImpl::commitPreservedLocked() {
  const Graph &G = *M->G;
  for (size_t SI = 0; SI < M->Stateful.size(); ++SI) {
    const StatefulInput &S = M->Stateful[SI];
    StatefulState &St = States[SI];
    if (!S.Preserved || S.UpdateFrom < 0)
      continue;
    const std::vector<int64_t> &Out = RunDims[S.UpdateFrom];
    if (Out.size() != S.BaseDims.size())
      return makeError(ErrorCode::Shape, "output '", G.Values[S.UpdateFrom].Name, "' has shape ", dimsText(Out),
                       ", not the rank of the preserved input '", G.Values[S.Value].Name, "' it updates");
    if (Ptrs[S.UpdateFrom] != St.Spare->Data) {
      // A data-dependent output shape: it was allocated per run, copy it into the spare buffer.
      if (!S.DeclaredCap.empty() && elementCountOf(Out) > elementCountOf(S.DeclaredCap))
        return makeError(ErrorCode::Shape, "output '", G.Values[S.UpdateFrom].Name, "' has shape ", dimsText(Out),
                         ", beyond the declared capacity ", dimsText(S.DeclaredCap), " of '", G.Values[S.Value].Name,
                         "'");
      const size_t Bytes = elementCountOf(Out) * getElementSize(G.Values[S.Value].Type);
      const size_t CapBytes = std::max(elementCountOf(Out), elementCountOf(St.Cap)) * getElementSize(G.Values[S.Value].Type);
      if (St.Spare->Bytes < CapBytes) {
        auto B = Buffer::allocate(CapBytes);
        if (!B)
          return makeError(ErrorCode::OutOfResource, "cannot allocate ", Bytes, " bytes for preserved tensor '",
                           G.Values[S.Value].Name, "'");
        St.Spare = std::move(B);
      }
      if (Bytes)
        std::memcpy(St.Spare->Data, Ptrs[S.UpdateFrom], Bytes);
    }
    std::swap(St.Cur, St.Spare);
    St.Dims = Out;
    if (elementCountOf(Out) > elementCountOf(St.Cap))
      St.Cap = Out;
  }
  return Status::ok();
}

} // namespace runtime
} // namespace optimium

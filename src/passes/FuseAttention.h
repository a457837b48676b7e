// Fusion of multi-head attention as BERT-style encoders export it op by op,
//   Qh = Transpose(Reshape(q, [B, S, H, D]), [0, 2, 1, 3])
//   Kt = Transpose(Reshape(k, [B, T, H, D]), [0, 2, 3, 1])      (or [0, 2, 1, 3] then [0, 1, 3, 2])
//   Vh = Transpose(Reshape(v, [B, T, H, Dv]), [0, 2, 1, 3])
//   P  = Softmax(Add(Div(MatMul(Qh, Kt), c), mask), axis -1)   (Div / Mul by a scalar and the mask optional)
//   y  = Reshape(Transpose(MatMul(P, Vh), [0, 2, 1, 3]), [B, S, H * Dv])
// into one ONNX Attention node (opset 23, 3-D inputs, q_num_heads = kv_num_heads = H, scale 1 / c
// or c, attn_mask = mask): the [B, H, S, T] score tensor and the head transposes never exist, and
// the kernel runs per (batch, head, query block) with the scores in cache.
// A decoder step with a KV cache (GPT-2 style exports) appends the new keys / values first:
//   present_key   = Concat(past_key, Transpose(Reshape(k, [B, T, H, D]), [0, 2, 1, 3]), axis 2)
//   Kt            = Transpose(present_key, [0, 1, 3, 2])
//   present_value = Concat(past_value, Vh, axis 2),  y from MatMul(P, present_value)
// and becomes an Attention node with past_key / past_value inputs and the present outputs (the
// Concats' values, graph outputs or not): its kernel reads each cache row once, copying it into
// the present output while using it, where the op-by-op graph copies the cache and reads it again.
#pragma once

#include <cstddef>

#include "ir/FusedOps.h"
#include "ir/Graph.h"

namespace optimium {
namespace runtime {
namespace detail {

/// Replaces every such float32 chain whose intermediates (everything between q / k / v / mask
/// and y, but the present caches) have no other readers and are not graph outputs by an
/// Attention node writing y. Fires
/// only where Attention computes the same function: reshapes that split the last dim into heads
/// (batch and sequence dims kept), the exact permutations above, a positive finite scalar scale,
/// a mask whose last dim is the key count and whose other dims are 1 or the scores' (so the Add
/// does not broadcast the scores to a larger shape), and a Softmax over the last axis. Graphs with
/// subgraphs (If / Loop / Scan) are left alone. Returns the number of chains fused. Callers skip
/// it when every intermediate must stay readable.
size_t fuseAttention(Graph &G);

} // namespace detail
} // namespace runtime
} // namespace optimium

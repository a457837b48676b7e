#!/usr/bin/env python3
"""Differential tester (NNSmith-style): random valid ONNX graphs, ONNX Runtime as the reference.

  scripts/difftest.py --seed 1 --count 200 --out build/difftest [--runner PATH] [--save-regressions] [--keep]

Each graph is generated from (seed, index): chains/DAGs of elementwise ops with numpy broadcasting,
mixed dtypes (Cast), symbolic input dims (dim_param, unknown dims, dim_value -1), shape ops (incl.
shapes computed at run time from Shape), convolutions and pooling (also in the NHWC layout tf2onnx
emits), MatMul/Gemm, reductions, ArgMax/TopK/CumSum and If/Loop with outer-scope values, at an opset
between 13 and 21. The generator tracks every tensor's per-case shape, a value range and whether its
values are bit-exact across correct implementations (so discontinuous ops - Floor, comparisons,
ArgMax, Cast to int - only see exact data). A graph is kept when onnx.checker (full check) accepts it
and ONNX Runtime runs it with finite intermediates whose shapes match the tracked ones; a graph ONNX
Runtime refuses is discarded. The kept graphs are written as a corpus (OUTDIR/index.json, the layout
optimium_corpus_runner reads), our runtime runs the corpus, and every failure is minimized (greedy
delta debugging over nodes, ONNX Runtime recomputing the references) and, with --save-regressions,
saved under tests/difftest/regressions/<name>/ and listed in tests/difftest/regressions/index.json.

Prints `compared N graphs (M discarded as ORT-invalid): N passed, N failed`; exit 1 on any failure.
Without --keep the corpus is staged on /dev/shm and OUTDIR keeps only the failing graphs (plus
OUTDIR/minimized/ and OUTDIR/failures.txt); scripts/difftest.sh wraps this with the shared venv.

Constructs left out because ONNX Runtime (the reference) or onnx itself gets them wrong:
- Loop with a trip count and no cond input whose body's cond turns false: the spec says the body's
  cond is then ignored (a for loop); ORT and onnx.reference stop early. Early exits get a cond input.
- Cast float32 -> float16 of values float16 cannot hold exactly: ORT runs most float16 ops in
  float32 and drops the float32 -> float16 -> float32 round trip, skipping this Cast's rounding;
  such values are marked inexact (no comparisons, Floor, ArgMax or Cast to int on them).
- MaxPool/AveragePool with auto_pad SAME and dilations (ORT gives ceil(d/s)-1 outputs), SAME with a
  stride above the kernel, Conv with SAME and dilations (ORT refuses both).
- LayerNormalization with epsilon 1e-12 (ill-conditioned on rows equal to the last bit).
- onnx's checker and shape inference abort on Slice over inputs declared with dim_value -1, so they
  are given a copy with dim_params there (ORT and our runtime get the -1).
"""
import argparse
import atexit
import copy
import hashlib
import json
import math
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper, shape_inference

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_RUNNER = os.path.join(ROOT, 'build', 'tests', 'realmodels', 'optimium_corpus_runner')
DEFAULT_REGRESSIONS = os.path.join(ROOT, 'tests', 'difftest', 'regressions')
I64MAX = 2**63 - 1
I64MIN = -2**63

DTYPES = {
    'f32': (TensorProto.FLOAT, np.float32),
    'f16': (TensorProto.FLOAT16, np.float16),
    'i32': (TensorProto.INT32, np.int32),
    'i64': (TensorProto.INT64, np.int64),
    'b': (TensorProto.BOOL, np.bool_),
    'u8': (TensorProto.UINT8, np.uint8),
    'i8': (TensorProto.INT8, np.int8),
}
NP2DT = {np.dtype(v[1]): k for k, v in DTYPES.items()}
FLOATS = ('f32', 'f16')
INTS = ('i32', 'i64', 'u8', 'i8')
NUMERIC = FLOATS + INTS
ALLDT = NUMERIC + ('b',)
IRANGE = {'i32': (-2**31, 2**31 - 1), 'i64': (I64MIN, I64MAX), 'u8': (0, 255), 'i8': (-128, 127)}
MAXEL = 10000     # elements of one tensor (largest case)
BIG = 1e4         # tracked magnitude ceiling for float values
MIN_IR = {13: 7, 14: 7, 15: 8, 16: 8, 17: 8, 18: 8, 19: 9, 20: 9, 21: 10}


def carr(a):
    """C-ordered array; keeps 0-d arrays 0-d (np.ascontiguousarray makes them 1-d)."""
    return np.array(a, order='C')


class Skip(Exception):
    """The generator step does not fit the current graph; try another one."""


# --------------------------------------------------------------------------------------------
# Tracked values. A dim is a tuple with one size per case (the two cases of a graph with symbolic
# dims get different sizes); a dim that is equal across cases is static.

def is_static(d):
    return all(x == d[0] for x in d)


def numel(shape, c):
    return math.prod(d[c] for d in shape)


def maxel(shape, nc):
    return max(numel(shape, c) for c in range(nc)) if shape else 1


def tmul(a, b):
    return tuple(x * y for x, y in zip(a, b))


class Val:
    __slots__ = ('name', 'dt', 'shape', 'lo', 'hi', 'exact', 'grid', 'hidden', 'kind', 'data', 'empty')

    def __init__(self, name, dt, shape, lo=0.0, hi=0.0, exact=True, grid=None, hidden=False,
                 kind='node', data=None):
        self.name, self.dt, self.shape = name, dt, tuple(shape)
        self.lo, self.hi, self.exact, self.grid = float(lo), float(hi), exact, grid
        self.hidden, self.kind, self.data = hidden, kind, data
        self.empty = any(0 in d for d in self.shape)

    @property
    def rank(self):
        return len(self.shape)

    def mag(self):
        return max(abs(self.lo), abs(self.hi))


def settle(dt, lo, hi, exact, grid):
    """Facts of an arithmetic result: ints must not overflow, floats stay exact only while their
    values are multiples of 2^-grid small enough to be represented exactly."""
    if dt in INTS:
        rlo, rhi = IRANGE[dt]
        if lo < rlo or hi > rhi or abs(lo) > 2**40 or abs(hi) > 2**40:
            raise Skip
        return dict(lo=lo, hi=hi, exact=True, grid=0)
    if dt == 'b':
        return dict(lo=0, hi=1, exact=True, grid=0)
    m = max(abs(lo), abs(hi))
    if not math.isfinite(m) or m > BIG:
        raise Skip
    lim = 2**24 if dt == 'f32' else 2**11
    if grid is not None and (grid > 24 or m * 2.0**grid >= lim):
        grid = None
    return dict(lo=lo, hi=hi, exact=bool(exact and grid is not None), grid=grid)


def keep(dt, lo, hi, exact, grid):
    """Facts of an exactness-preserving op."""
    if dt in FLOATS and grid is not None:
        lim = 2**24 if dt == 'f32' else 2**11
        if max(abs(lo), abs(hi)) * 2.0**grid >= lim:
            grid = None
    return dict(lo=lo, hi=hi, exact=exact, grid=grid)


def mono(f, lo, hi):
    a, b = f(lo), f(hi)
    return min(a, b), max(a, b)


def sig(x):
    x = max(-60.0, min(60.0, x))
    return 1.0 / (1.0 + math.exp(-x))


# --------------------------------------------------------------------------------------------
# Input data

def gen_spec(rng, dt, want=None):
    if dt in FLOATS:
        r = rng.random()
        if want == 'pos':
            return ('grid', 2, 0.25, 4.0) if r < 0.5 else ('uni', 0.1, 3.0)
        if want == 'small':
            return ('grid', 2, -2.0, 2.0) if r < 0.6 else ('uni', -1.5, 1.5)
        if r < 0.4:
            return ('grid', 2, -4.0, 4.0)
        if r < 0.55:
            return ('grid', 1, -6.0, 6.0)
        return ('uni', -3.0, 3.0)
    if dt == 'b':
        return ('bool',)
    lo, hi = {'u8': (0, 20), 'i8': (-20, 20), 'i32': (-40, 40), 'i64': (-40, 40)}[dt]
    if want == 'pos':
        lo = 1
    elif want == 'small':
        lo, hi = max(lo, -3), 3
    return ('int', lo, hi)


def spec_facts(dt, spec):
    if spec[0] == 'grid':
        return spec[2], spec[3], spec[1]
    if spec[0] == 'uni':
        return spec[1], spec[2], None
    if spec[0] == 'int':
        return spec[1], spec[2], 0
    return 0, 1, 0


def spec_data(nrng, dt, spec, shape):
    npdt = DTYPES[dt][1]
    if spec[0] == 'grid':
        g = 2**spec[1]
        a = nrng.integers(int(spec[2] * g), int(spec[3] * g) + 1, size=shape) / g
    elif spec[0] == 'uni':
        a = nrng.uniform(spec[1], spec[2], size=shape)
    elif spec[0] == 'int':
        a = nrng.integers(spec[1], spec[2] + 1, size=shape)
    elif spec[0] == 'index':
        a = nrng.integers(spec[1], spec[2] + 1, size=shape)
    else:
        a = nrng.random(size=shape) < 0.5
    return carr(np.asarray(a).astype(npdt))


# --------------------------------------------------------------------------------------------
# Graph builder

SYM_NAMES = ['N', 'batch', 'seq', 'H', 'W', 'len', 'B', 'T']


class Builder:
    def __init__(self, rng, opset, nc, parent=None):
        self.rng, self.opset, self.nc, self.parent = rng, opset, nc, parent
        self.root = parent.root if parent else self
        self.nodes = []
        self.pool = []
        self.iter_val = None        # a Loop body's iteration number
        self.bounded = False        # a Loop body: keep values bounded
        if parent is None:
            self.counter = 0
            self.inputs, self.inits, self.specs = [], [], {}
            self.used = Counter()
            self.syms, self.symname = [], {}
            self.style = 'plain'
            self.vals = {}           # top-level node outputs, for the shape check against ORT
            self.has_f16 = False
            self.features = set()

    # names ---------------------------------------------------------------------------------
    def fresh(self, kind='v'):
        r = self.root
        r.counter += 1
        k = r.counter
        if r.style == 'tf':
            return f'serving_default_input_{k}:0' if kind == 'in' else f'model/{kind}_{k}/BiasAdd:0'
        if r.style == 'torch':
            return f'input.{k}' if kind == 'in' else f'/blocks.{k}/{kind}_output_0'
        return f'{kind}{k}'

    def visible(self):
        return (self.parent.visible() if self.parent else []) + self.pool

    def pick(self, pred, allow_const=False):
        c = [v for v in self.visible() if (allow_const or v.kind != 'const') and not v.hidden and not v.empty
             and pred(v)]
        if not c:
            return None
        n = len(c)
        w = [(1.0 + 2.0 * i / n) * (3.0 if self.root.used[v.name] == 0 else 1.0) for i, v in enumerate(c)]
        return self.rng.choices(c, w)[0]

    # values --------------------------------------------------------------------------------
    def new_input(self, dt, shape, spec=None, want=None):
        r = self.root
        if dt == 'f16':
            r.has_f16 = True
        spec = spec or gen_spec(r.rng, dt, want)
        lo, hi, grid = spec_facts(dt, spec)
        v = Val(r.fresh('in'), dt, shape, lo, hi, True, grid, kind='in')
        r.inputs.append(v)
        r.specs[v.name] = spec
        r.pool.append(v)
        return v

    def const(self, arr, dt=None, grid=None):
        arr = carr(arr)
        dt = dt or NP2DT[arr.dtype]
        arr = arr.astype(DTYPES[dt][1])
        name = self.fresh('c')
        lo = float(arr.min()) if arr.size else 0.0
        hi = float(arr.max()) if arr.size else 0.0
        if dt in INTS or dt == 'b':
            grid = 0
        v = Val(name, dt, [(s,) * self.nc for s in arr.shape], lo, hi, True, grid, kind='const', data=arr)
        rng = self.rng
        if self.parent is not None and rng.random() < 0.5:
            self.nodes.append(helper.make_node('Constant', [], [name], value=numpy_helper.from_array(arr)))
        elif self.parent is None and rng.random() < 0.25:
            # Constant node, sometimes with the typed value_* attributes
            if dt == 'f32' and arr.ndim == 0 and rng.random() < 0.5:
                n = helper.make_node('Constant', [], [name], value_float=float(arr))
            elif dt == 'f32' and arr.ndim == 1 and arr.size and rng.random() < 0.5:
                n = helper.make_node('Constant', [], [name], value_floats=[float(x) for x in arr])
            elif dt == 'i64' and arr.ndim == 0 and rng.random() < 0.5:
                n = helper.make_node('Constant', [], [name], value_int=int(arr))
            elif dt == 'i64' and arr.ndim == 1 and arr.size and rng.random() < 0.5:
                n = helper.make_node('Constant', [], [name], value_ints=[int(x) for x in arr])
            else:
                n = helper.make_node('Constant', [], [name], value=numpy_helper.from_array(arr))
            self.nodes.append(n)
            if self.parent is None:
                self.root.vals[name] = v
        else:
            self.root.inits.append(numpy_helper.from_array(arr, name))
        return v

    def const_rand(self, dt, shape, want=None):
        """A constant of a static shape (dims as ints) with generator-like data."""
        spec = gen_spec(self.rng, dt, want)
        nrng = np.random.default_rng(self.rng.getrandbits(32))
        arr = spec_data(nrng, dt, spec, tuple(shape))
        _, _, grid = spec_facts(dt, spec)
        return self.const(arr, dt, grid)

    def ci64(self, vals):
        return self.const(np.array(vals, dtype=np.int64))

    def node(self, op, ins, outs, **attrs):
        names = [v.name for v in outs]
        nm = f'{op}_{self.root.counter}' if self.rng.random() < 0.85 else ''
        n = helper.make_node(op, [i.name if i is not None else '' for i in ins], names, name=nm, **attrs)
        self.nodes.append(n)
        for i in ins:
            if i is not None:
                self.root.used[i.name] += 1
        for v in outs:
            if v.dt == 'f16':
                self.root.has_f16 = True
            if not v.hidden:
                self.pool.append(v)
            if self.parent is None:
                self.root.vals[v.name] = v
        self.root.features.add(op)
        return outs

    def out(self, dt, shape, facts, hidden=False):
        return Val(self.fresh(), dt, shape, hidden=hidden, **facts)

    def one(self):
        return (1,) * self.nc

    def sdim(self, k):
        return (k,) * self.nc


def bcast(nc, *shapes):
    r = max((len(s) for s in shapes), default=0)
    out = []
    for i in range(r):
        dims = [s[len(s) - r + i] for s in shapes if len(s) - r + i >= 0]
        per = []
        for c in range(nc):
            vals = {d[c] for d in dims}
            vals.discard(1)
            if len(vals) > 1:
                return None
            per.append(vals.pop() if vals else 1)
        out.append(tuple(per))
    return tuple(out)


def rand_dim(b, allow_sym=True, lo=1, hi=8):
    if allow_sym and b.root.syms and b.rng.random() < 0.35:
        return b.rng.choice(b.root.syms)
    v = b.rng.choice([x for x in [1, 2, 2, 3, 3, 4, 4, 5, 6, 7, 8] if lo <= x <= hi] or [lo])
    return b.sdim(v)


def rand_shape(b, rmin=1, rmax=4, limit=1500, allow_sym=True):
    for _ in range(20):
        r = b.rng.randint(rmin, rmax)
        s = tuple(rand_dim(b, allow_sym) for _ in range(r))
        if maxel(s, b.nc) <= limit:
            return s
    return tuple(b.sdim(2) for _ in range(rmin))


def get_val(b, pred, make, p_new=0.1):
    v = b.pick(pred)
    if v is None or b.rng.random() < p_new:
        v = make()
    if v is None:
        raise Skip
    return v


def partner_shape(b, shape, static_only=False, grow=True):
    rng = b.rng
    s = list(shape)
    r = rng.random()
    if r < 0.15:
        s = []
    elif r < 0.4 and s:
        s = s[rng.randint(0, len(s)):]
    s = [b.one() if rng.random() < 0.3 else d for d in s]
    if static_only:
        s = [d if is_static(d) else b.one() for d in s]
    if grow and rng.random() < 0.08 and len(s) >= len(shape) and len(s) < 5:
        s = [b.sdim(rng.randint(2, 3))] + s
    return tuple(s)


def operand_like(b, a, dt, want=None, pool_p=0.45, pred=None, into=False):
    """A value broadcast-compatible with a (into: the broadcast result keeps a's shape)."""
    rng = b.rng

    def ok(u):
        if u is a or u.dt != dt or (pred and not pred(u)):
            return False
        s = bcast(b.nc, a.shape, u.shape)
        return s is not None and maxel(s, b.nc) <= MAXEL and (not into or s == a.shape)
    if rng.random() < pool_p:
        u = b.pick(ok)
        if u is not None:
            return u
    r = rng.random()
    if r < 0.65 or b.parent is not None:
        shape = partner_shape(b, a.shape, static_only=True, grow=not into)
        return b.const_rand(dt, [d[0] for d in shape], want)
    shape = partner_shape(b, a.shape, grow=not into)
    return b.new_input(dt, shape, want=want)


# --------------------------------------------------------------------------------------------
# Emitters (one node, tracked facts)

F16_OK = {'Relu', 'Abs', 'Neg', 'Sigmoid', 'Tanh', 'Clip', 'Exp', 'Log', 'Sqrt', 'Floor', 'Ceil', 'Round',
          'Sign', 'LeakyRelu', 'Reciprocal', 'Erf', 'HardSigmoid', 'Softplus', 'HardSwish', 'Softmax'}


def emit_unary(b, op, v, **attrs):
    dt, lo, hi = v.dt, v.lo, v.hi
    ex, g = v.exact, v.grid
    ins = [v]
    if op == 'Not':
        facts = dict(lo=0, hi=1, exact=True, grid=0)
    elif op == 'Relu':
        facts = keep(dt, max(lo, 0), max(hi, 0), ex, g)
    elif op == 'Abs':
        if dt in INTS and lo <= IRANGE[dt][0]:
            raise Skip
        a = 0.0 if lo <= 0 <= hi else min(abs(lo), abs(hi))
        facts = keep(dt, a, max(abs(lo), abs(hi)), ex, g)
    elif op == 'Neg':
        if dt == 'u8' or (dt in INTS and lo <= IRANGE[dt][0]):
            raise Skip
        facts = keep(dt, -hi, -lo, ex, g)
    elif op in ('Floor', 'Ceil', 'Round'):
        if not ex:
            raise Skip
        f = {'Floor': math.floor, 'Ceil': math.ceil, 'Round': round}[op]
        facts = keep(dt, f(lo), f(hi), True, 0)
    elif op == 'Sign':
        if dt in FLOATS and not ex:
            raise Skip
        facts = dict(lo=-1 if lo < 0 else 0, hi=1 if hi > 0 else 0, exact=True, grid=0)
    elif op == 'Clip':
        mn = attrs.pop('_min', None)
        mx = attrs.pop('_max', None)
        cmn = b.const(np.array(mn, DTYPES[dt][1])) if mn is not None else None
        cmx = b.const(np.array(mx, DTYPES[dt][1])) if mx is not None else None
        nlo, nhi = lo, hi
        if mn is not None:
            nlo, nhi = max(nlo, mn), max(nhi, mn)
        if mx is not None:
            nlo, nhi = min(nlo, mx), min(nhi, mx)
        gg = g
        for c in (mn, mx):
            if c is not None and g is not None and (c * 2**g) != int(c * 2**g):
                gg = None
        ins = [v, cmn, cmx] if cmx is not None else ([v, cmn] if cmn is not None else [v])
        if cmn is None and cmx is not None:
            ins = [v, None, cmx]
        facts = keep(dt, nlo, nhi, ex and (gg is not None or dt not in FLOATS or (mn is None and mx is None)), gg)
        if dt in FLOATS and (mn is not None or mx is not None) and gg is None:
            facts['exact'] = False
    else:
        if dt not in FLOATS:
            raise Skip
        if op == 'Sigmoid':
            a, c = mono(sig, lo, hi)
        elif op == 'Tanh':
            a, c = mono(math.tanh, lo, hi)
        elif op == 'Exp':
            if hi > 10:
                raise Skip
            a, c = mono(math.exp, lo, hi)
        elif op == 'Log':
            if lo < 0.01:
                raise Skip
            a, c = mono(math.log, lo, hi)
        elif op == 'Sqrt':
            if lo < 0:
                raise Skip
            a, c = mono(math.sqrt, lo, hi)
        elif op == 'Reciprocal':
            if not (lo >= 0.2 or hi <= -0.2):
                raise Skip
            a, c = mono(lambda x: 1.0 / x, lo, hi)
        elif op == 'Erf':
            a, c = mono(math.erf, lo, hi)
        elif op == 'Softplus':
            if hi > 30:
                raise Skip
            a, c = mono(lambda x: math.log1p(math.exp(x)), lo, hi)
        elif op == 'LeakyRelu':
            al = attrs.get('alpha', 0.01)
            a, c = mono(lambda x: x if x >= 0 else al * x, lo, hi)
        elif op == 'HardSigmoid':
            al, be = attrs.get('alpha', 0.2), attrs.get('beta', 0.5)
            a, c = mono(lambda x: min(1.0, max(0.0, al * x + be)), lo, hi)
        elif op == 'HardSwish':
            a, c = min(0.0, lo) - 0.375, max(hi, 0.0)
            a = max(a, -0.375)
        elif op == 'Softmax':
            a, c = 0.0, 1.0
        elif op == 'LogSoftmax':
            ax = attrs.get('axis', -1)
            n = max(v.shape[ax]) if v.shape else 1
            a, c = lo - hi - math.log(n) - 1.0, 0.0
        else:
            raise ValueError(op)
        facts = settle(dt, a, c, False, None)
    o = b.out(dt if op not in ('Not',) else 'b', v.shape, facts)
    return b.node(op, ins, [o], **attrs)[0]


def emit_binary(b, op, x, y):
    s = bcast(b.nc, x.shape, y.shape)
    if s is None or maxel(s, b.nc) > MAXEL:
        raise Skip
    dt = x.dt
    gx, gy = x.grid, y.grid
    ex = x.exact and y.exact
    if op in ('Add', 'Sub'):
        lo = x.lo + y.lo if op == 'Add' else x.lo - y.hi
        hi = x.hi + y.hi if op == 'Add' else x.hi - y.lo
        if dt == 'u8' and lo < 0:
            raise Skip
        facts = settle(dt, lo, hi, ex, max(gx, gy) if gx is not None and gy is not None else None)
    elif op == 'Mul':
        p = [x.lo * y.lo, x.lo * y.hi, x.hi * y.lo, x.hi * y.hi]
        facts = settle(dt, min(p), max(p), ex, gx + gy if gx is not None and gy is not None else None)
    elif op == 'Div':
        if dt in INTS:
            if x.lo < 0 or y.lo < 1:
                raise Skip
            facts = settle(dt, 0, x.hi, True, 0)
        else:
            if not (y.lo >= 0.2 or y.hi <= -0.2):
                raise Skip
            p = [x.lo / y.lo, x.lo / y.hi, x.hi / y.lo, x.hi / y.hi]
            facts = settle(dt, min(p), max(p), False, None)
    elif op == 'Pow':
        if y.kind == 'const' and y.data.size == 1 and float(y.data.reshape(-1)[0]) in (1.0, 2.0, 3.0) and x.mag() <= 20:
            e = float(y.data.reshape(-1)[0])        # an integer power: any base
            p = [a ** e for a in (x.lo, x.hi)] + ([0.0] if x.lo < 0 < x.hi else [])
        elif x.lo < 0.05 or x.hi > 6 or y.mag() > 3:
            raise Skip
        else:
            p = [a ** e for a in (x.lo, x.hi) for e in (y.lo, y.hi)]
        facts = settle(dt, min(p), max(p), False, None)
    elif op in ('Max', 'Min'):
        f = max if op == 'Max' else min
        facts = keep(dt, f(x.lo, y.lo), f(x.hi, y.hi), ex, max(gx, gy) if gx is not None and gy is not None else None)
    elif op in ('Equal', 'Less', 'Greater', 'LessOrEqual', 'GreaterOrEqual', 'And', 'Or', 'Xor'):
        if dt in FLOATS and not ex:
            raise Skip
        dt = 'b'
        facts = dict(lo=0, hi=1, exact=True, grid=0)
    else:
        raise ValueError(op)
    return b.node(op, [x, y], [b.out(dt, s, facts)])[0]


def emit_transpose(b, v, perm=None):
    shape = tuple(v.shape[p] for p in perm) if perm is not None else tuple(reversed(v.shape))
    o = b.out(v.dt, shape, keep(v.dt, v.lo, v.hi, v.exact, v.grid))
    if perm is None:
        return b.node('Transpose', [v], [o])[0]
    return b.node('Transpose', [v], [o], perm=list(perm))[0]


def emit_clip(b, v, mn, mx):
    return emit_unary(b, 'Clip', v, _min=mn, _max=mx)


def make_positive(b, v, lo=0.1, hi=None):
    if v.lo >= lo and (hi is None or v.hi <= hi):
        return v
    if b.rng.random() < 0.5 or v.dt not in FLOATS:
        return emit_clip(b, v, lo if v.dt in FLOATS else max(1, int(lo)), hi)
    a = emit_unary(b, 'Abs', v) if v.lo < 0 else v
    a = emit_binary(b, 'Add', a, b.const(np.array(lo + 0.25, DTYPES[v.dt][1]), grid=2))
    if hi is not None and a.hi > hi:
        a = emit_clip(b, a, None, hi)
    return a


def make_away(b, v, eps=0.2):
    if v.lo >= eps or v.hi <= -eps:
        return v
    a = emit_unary(b, 'Abs', v)
    return emit_binary(b, 'Add', a, b.const(np.array(0.5, DTYPES[v.dt][1]), grid=1))


def emit_cast(b, v, to):
    src = v.dt
    if src in FLOATS and to not in FLOATS and not v.exact:
        raise Skip
    if to in INTS:
        rlo, rhi = IRANGE[to]
        lo, hi = (math.trunc(v.lo), math.trunc(v.hi)) if src in FLOATS else (v.lo, v.hi)
        if lo < rlo or hi > rhi or (to == 'u8' and v.lo <= -1):
            if src in ('b', 'u8', 'i8') and to not in ('u8', 'i8'):
                pass
            else:
                cl, ch = max(rlo, -1000), min(rhi, 1000)
                if to == 'u8':
                    cl = 0
                v = emit_clip(b, v, float(cl) if src in FLOATS else int(max(cl, IRANGE.get(src, (cl, ch))[0])),
                              float(ch) if src in FLOATS else int(min(ch, IRANGE.get(src, (cl, ch))[1])))
                lo, hi = (math.trunc(v.lo), math.trunc(v.hi)) if src in FLOATS else (v.lo, v.hi)
                if lo < rlo or hi > rhi:
                    raise Skip
        facts = dict(lo=lo, hi=hi, exact=True, grid=0)
    elif to == 'b':
        facts = dict(lo=0, hi=1, exact=True, grid=0)
    else:
        if src == 'b':
            facts = dict(lo=0, hi=1, exact=True, grid=0)
        else:
            if to == 'f16' and v.mag() > 60000:
                raise Skip
            g = v.grid if src in FLOATS else 0
            facts = keep(to, v.lo, v.hi, v.exact, g)
            if to == 'f16' and src != 'f16' and facts['grid'] is None:
                # ONNX Runtime has no float16 kernel for most ops: it computes them in float32
                # and drops the float32 -> float16 -> float32 round trip, i.e. this Cast's
                # rounding. Values that do not fit float16 exactly are therefore not exact.
                facts['exact'] = False
    o = b.out(to, v.shape, facts)
    return b.node('Cast', [v], [o], to=DTYPES[to][0])[0]


def reduce_input_form(op, opset):
    return (op == 'ReduceSum' and opset >= 13) or opset >= 18


def emit_reduce(b, op, v, axes=None, keepdims=1, noop=None, empty_axes=False):
    """axes None: all axes (attribute/input omitted); empty_axes: axes input given as []."""
    r = v.rank
    inform = reduce_input_form(op, b.opset)
    ins = [v]
    attrs = {}
    if keepdims != 1 or b.rng.random() < 0.5:
        attrs['keepdims'] = keepdims
    identity = False
    if inform:
        if noop is not None:
            attrs['noop_with_empty_axes'] = noop
        if axes is not None and axes:
            ins.append(b.ci64(axes))
        elif empty_axes:
            ins.append(b.const(np.zeros((0,), np.int64)))
        if (axes is None or not axes) and noop == 1:
            identity = True
    elif axes is not None and axes:
        attrs['axes'] = list(axes)
    red = set(range(r)) if (axes is None or not axes) else {a % r for a in axes}
    if identity:
        shape, red = v.shape, set()
    else:
        shape = tuple(d if i not in red else b.one() for i, d in enumerate(v.shape) if keepdims or i not in red)
    nmin = min(math.prod(v.shape[i][c] for i in red) for c in range(b.nc)) if red else 1
    nmax = max(math.prod(v.shape[i][c] for i in red) for c in range(b.nc)) if red else 1
    lo, hi, m, g = v.lo, v.hi, v.mag(), v.grid
    ex = v.exact
    if identity:
        facts = keep(v.dt, lo, hi, ex, g)
    elif op == 'ReduceSum':
        facts = settle(v.dt, min(nmin * lo, nmax * lo), max(nmin * hi, nmax * hi), ex, g)
    elif op == 'ReduceMean':
        facts = settle(v.dt, lo, hi, False, None)
    elif op in ('ReduceMax', 'ReduceMin'):
        facts = keep(v.dt, lo, hi, ex, g)
    elif op == 'ReduceProd':
        if m > 2.5 and nmax > 6 or (m > 1 and nmax * math.log(m) > math.log(BIG)):
            raise Skip
        bd = max(m ** nmax, 1.0)
        facts = settle(v.dt, -bd if lo < 0 else 0.0, bd, ex, g * nmax if g is not None else None)
        if v.dt in FLOATS and lo >= 1:
            facts['lo'] = 1.0
    elif op == 'ReduceL1':
        facts = settle(v.dt, 0.0, nmax * m, ex, g)
    elif op == 'ReduceL2':
        facts = settle(v.dt, 0.0, math.sqrt(nmax) * m, False, None)
    elif op == 'ReduceSumSquare':
        facts = settle(v.dt, 0.0, nmax * m * m, ex, 2 * g if g is not None else None)
    elif op == 'ReduceLogSum':
        if lo <= 0.05:
            raise Skip
        facts = settle(v.dt, math.log(nmin * lo), math.log(nmax * hi), False, None)
    elif op == 'ReduceLogSumExp':
        if hi > 30:
            raise Skip
        facts = settle(v.dt, lo, hi + math.log(nmax), False, None)
    else:
        raise ValueError(op)
    o = b.out(v.dt, shape, facts)
    if maxel(shape, b.nc) > MAXEL:
        raise Skip
    return b.node(op, ins, [o], **attrs)[0]


def emit_shape_dim(b, src, ax):
    """int64 [1] holding src's dim ax at run time."""
    d = src.shape[ax]
    facts = dict(lo=min(d), hi=max(d), exact=True, grid=0)
    r = b.rng.random()
    if b.opset >= 15 and r < 0.35:
        a = ax if b.rng.random() < 0.6 else ax - src.rank
        e = a + 1 if a != -1 else None
        kw = dict(start=a) if e is None else dict(start=a, end=e)
        return b.node('Shape', [src], [b.out('i64', (b.one(),), facts)], **kw)[0]
    s = b.node('Shape', [src], [b.out('i64', (b.sdim(src.rank),), dict(lo=0, hi=64, exact=True, grid=0))])[0]
    s.lo, s.hi = min(min(dd) for dd in src.shape), max(max(dd) for dd in src.shape)
    if r < 0.7:
        idx = b.ci64([ax if b.rng.random() < 0.7 else ax - src.rank])
        return b.node('Gather', [s, idx], [b.out('i64', (b.one(),), facts)], axis=0)[0]
    return b.node('Slice', [s, b.ci64([ax]), b.ci64([ax + 1])], [b.out('i64', (b.one(),), facts)])[0]


def emit_reshape(b, v, nd, shape_src=None):
    rng = b.rng
    if shape_src is not None:
        shp = b.node('Shape', [shape_src], [b.out('i64', (b.sdim(len(nd)),), dict(lo=1, hi=64, exact=True, grid=0))])[0]
        o = b.out(v.dt, nd, keep(v.dt, v.lo, v.hi, v.exact, v.grid))
        return b.node('Reshape', [v, shp], [o])[0]
    srcs = {}
    for u in b.visible():
        if u.hidden:
            continue
        for ax, d in enumerate(u.shape):
            if not is_static(d):
                srcs.setdefault(d, []).append((u, ax))
    entries = [None] * len(nd)
    minus = False
    order = sorted(range(len(nd)), key=lambda i: is_static(nd[i]))
    for i in order:
        d = nd[i]
        opts = []
        if is_static(d):
            opts += [('lit', d[0])] * 5
        if i < v.rank and v.shape[i] == d:
            opts += [('zero',)] * (1 if is_static(d) else 3)
        if not minus:
            opts += [('minus',)] * (1 if is_static(d) else 3)
        if not is_static(d) and d in srcs:
            opts += [('src',) + rng.choice(srcs[d])] * 3
        if not opts:
            raise Skip
        e = rng.choice(opts)
        if e[0] == 'minus':
            minus = True
        entries[i] = e

    def lit(e):
        return e[1] if e[0] == 'lit' else (0 if e[0] == 'zero' else -1)
    if all(e[0] != 'src' for e in entries):
        shp = b.ci64([lit(e) for e in entries])
    else:
        pieces, cur = [], []
        for e in entries:
            if e[0] == 'src':
                if cur:
                    pieces.append(b.ci64(cur))
                    cur = []
                pieces.append(emit_shape_dim(b, e[1], e[2]))
            else:
                cur.append(lit(e))
        if cur:
            pieces.append(b.ci64(cur))
        if len(pieces) == 1:
            shp = pieces[0]
        else:
            shp = b.node('Concat', pieces, [b.out('i64', (b.sdim(len(nd)),), dict(lo=-1, hi=64, exact=True, grid=0))],
                         axis=0)[0]
            b.root.features.add('shape-chain')
    attrs = {}
    if b.opset >= 14 and rng.random() < 0.15:
        attrs['allowzero'] = 1 if not any(e[0] == 'zero' for e in entries) and rng.random() < 0.5 else 0
    o = b.out(v.dt, nd, keep(v.dt, v.lo, v.hi, v.exact, v.grid))
    return b.node('Reshape', [v, shp], [o], **attrs)[0]


def reshape_dims(b, shape):
    rng = b.rng
    groups = []
    for d in shape:
        if groups and rng.random() < 0.35:
            groups[-1] = tmul(groups[-1], d)
        else:
            groups.append(d)
    out = []
    for d in groups:
        if is_static(d) and d[0] >= 4 and rng.random() < 0.4:
            divs = [f for f in range(2, d[0]) if d[0] % f == 0]
            if divs:
                f = rng.choice(divs)
                out += [b.sdim(f), b.sdim(d[0] // f)]
                continue
        out.append(d)
    if rng.random() < 0.15 and len(out) < 5:
        out.insert(rng.randint(0, len(out)), b.one())
    if not out:
        out = [b.one()] * rng.randint(1, 2)
    while len(out) > 6:
        out[0:2] = [tmul(out[0], out[1])]
    return tuple(out)


def slice_len(d, s, e, st):
    if s < 0:
        s += d
    if e < 0:
        e += d
    if st > 0:
        s = min(max(s, 0), d)
        e = min(max(e, 0), d)
        return max(0, -(-(e - s) // st))
    s = min(max(s, 0), d - 1)
    e = min(max(e, -1), d - 1)
    return max(0, -(-(s - e) // (-st)))


def conv_out(d, k, s, dil, pb, pe, auto=None, ceil=False):
    eff = dil * (k - 1) + 1
    if auto in ('SAME_UPPER', 'SAME_LOWER'):
        return -(-d // s)
    if auto == 'VALID':
        return (d - eff) // s + 1 if d >= eff else 0
    num = d + pb + pe - eff
    if num < 0:
        return 0
    return (-(-num // s) if ceil else num // s) + 1


# --------------------------------------------------------------------------------------------
# Generators: each adds one construct (one or a few nodes) or raises Skip.

def is_num(u, dts=NUMERIC):
    return u.dt in dts


def g_unary(b):
    rng = b.rng
    op = rng.choice(['Relu', 'Relu', 'Sigmoid', 'Tanh', 'Exp', 'Log', 'Sqrt', 'Abs', 'Neg', 'Reciprocal', 'Erf',
                     'Softplus', 'LeakyRelu', 'HardSigmoid', 'HardSwish', 'Clip', 'Clip', 'Floor', 'Ceil', 'Round',
                     'Sign', 'Not', 'Softmax', 'LogSoftmax'])
    if op == 'Not':
        v = get_val(b, lambda u: u.dt == 'b', lambda: b.new_input('b', rand_shape(b)))
        return emit_unary(b, 'Not', v)
    if op in ('Abs', 'Sign', 'Clip'):
        dts = NUMERIC
    elif op == 'Neg':
        dts = ('f32', 'f16', 'i32', 'i64', 'i8')
    elif op == 'Relu':
        dts = ('f32', 'f16', 'i32', 'i8') if b.opset >= 14 else ('f32', 'f16')
    else:
        dts = ('f32', 'f16') if op in F16_OK else ('f32',)
    need_exact = op in ('Floor', 'Ceil', 'Round') or (op == 'Sign')
    v = get_val(b, lambda u: u.dt in dts and (u.exact or not need_exact or u.dt not in FLOATS)
                and (op not in ('Softmax', 'LogSoftmax') or u.rank >= 1),
                lambda: b.new_input('f32', rand_shape(b)))
    if v.dt not in dts:
        raise Skip
    attrs = {}
    if op == 'Exp' and v.hi > 8:
        v = emit_clip(b, v, None, 4.0) if rng.random() < 0.5 else emit_unary(b, 'Tanh', v)
    if op == 'Softplus' and v.hi > 25:
        v = emit_clip(b, v, None, 8.0)
    if op == 'Log':
        v = make_positive(b, v, 0.1)
    if op == 'Sqrt' and v.lo < 0:
        v = emit_unary(b, 'Abs', v) if rng.random() < 0.7 else emit_unary(b, 'Relu', v)
    if op == 'Reciprocal':
        v = make_away(b, v)
    if op == 'LeakyRelu' and rng.random() < 0.7:
        attrs['alpha'] = rng.choice([0.01, 0.1, 0.2, 0.3, 0.5])
    if op == 'HardSigmoid' and rng.random() < 0.6:
        attrs['alpha'] = rng.choice([0.2, 1 / 6, 0.25])
        attrs['beta'] = rng.choice([0.5, 0.4])
    if op == 'HardSwish' and b.opset < 14:
        raise Skip
    if op in ('Softmax', 'LogSoftmax'):
        if v.rank == 0:
            raise Skip
        if rng.random() < 0.7:
            attrs['axis'] = rng.randrange(-v.rank, v.rank)
    if op == 'Clip':
        r = rng.random()
        if v.dt in FLOATS:
            a = rng.choice([-1.0, -0.5, 0.0, -2.0, 0.25])
            c = rng.choice([0.5, 1.0, 2.0, 6.0, 3.5])
        else:
            lo, hi = IRANGE[v.dt]
            a = max(lo, rng.choice([-5, 0, 1, -1]))
            c = min(hi, rng.choice([3, 6, 10, 20]))
        if r < 0.5:
            attrs['_min'], attrs['_max'] = a, c
        elif r < 0.7:
            attrs['_min'] = a
        elif r < 0.9:
            attrs['_max'] = c
    return emit_unary(b, op, v, **attrs)


def g_arith(b):
    rng = b.rng
    op = rng.choice(['Add', 'Add', 'Sub', 'Mul', 'Mul'])
    dts = ('f32', 'f32', 'f32', 'i32', 'i64', 'f16') + (('u8', 'i8') if b.opset >= 14 else ())
    x = get_val(b, lambda u: u.dt in dts and u.mag() < 1000,
                lambda: b.new_input(rng.choice(dts[:5]), rand_shape(b)))
    if x.dt not in dts:
        raise Skip
    y = operand_like(b, x, x.dt, want='small' if op == 'Mul' else None)
    if rng.random() < 0.5:
        x, y = y, x
    return emit_binary(b, op, x, y)


def g_div(b):
    rng = b.rng
    x = get_val(b, lambda u: u.dt in ('f32', 'i32', 'i64'), lambda: b.new_input('f32', rand_shape(b)))
    if x.dt in INTS:
        if x.lo < 0:
            x = emit_unary(b, 'Abs', x)
        y = operand_like(b, x, x.dt, want='pos')
        if y.lo < 1:
            y = emit_clip(b, y, 1, 1000) if rng.random() < 0.5 else emit_binary(
                b, 'Add', emit_unary(b, 'Abs', y), b.const(np.array(1, DTYPES[x.dt][1])))
    else:
        y = make_away(b, operand_like(b, x, x.dt))
    return emit_binary(b, 'Div', x, y)


def g_pow(b):
    rng = b.rng
    x = get_val(b, lambda u: u.dt == 'f32', lambda: b.new_input('f32', rand_shape(b), want='pos'))
    x = make_positive(b, x, 0.1, 4.0)
    r = rng.random()
    if r < 0.5:
        e = b.const(np.array(rng.choice([2.0, 3.0, 0.5, -1.0, 1.5, -0.5]), np.float32), grid=1)
    elif r < 0.65:
        e = b.const(np.array(rng.choice([2, 3, -1]), rng.choice([np.int64, np.int32])))
    else:
        e = operand_like(b, x, 'f32', want='small')
        if e.mag() > 2:
            e = emit_clip(b, e, -2.0, 2.0)
    return emit_binary(b, 'Pow', x, e)


def g_maxmin(b):
    rng = b.rng
    op = rng.choice(['Max', 'Min'])
    x = get_val(b, lambda u: u.dt in ('f32', 'i32', 'i64', 'f16', 'u8', 'i8'),
                lambda: b.new_input('f32', rand_shape(b)))
    n = rng.choice([1, 2, 2, 2, 3])
    ins = [x] + [operand_like(b, x, x.dt) for _ in range(n - 1)]
    s = bcast(b.nc, *[i.shape for i in ins])
    if s is None or maxel(s, b.nc) > MAXEL:
        raise Skip
    f = max if op == 'Max' else min
    grids = [i.grid for i in ins]
    facts = keep(x.dt, f(i.lo for i in ins), f(i.hi for i in ins), all(i.exact for i in ins),
                 max(grids) if None not in grids else None)
    return b.node(op, ins, [b.out(x.dt, s, facts)])[0]


def g_compare(b):
    rng = b.rng
    op = rng.choice(['Equal', 'Less', 'Greater', 'Less', 'Greater', 'Equal', 'LessOrEqual', 'GreaterOrEqual'])
    dts = ('f32', 'i32', 'i64', 'f16', 'u8', 'i8') + (('b',) if op == 'Equal' else ())
    x = get_val(b, lambda u: u.dt in dts and u.exact, lambda: b.new_input(rng.choice(['f32', 'i64', 'i32']), rand_shape(b)))
    y = operand_like(b, x, x.dt, pred=lambda u: u.exact)
    if rng.random() < 0.5:
        x, y = y, x
    return emit_binary(b, op, x, y)


def g_logic(b):
    rng = b.rng
    op = rng.choice(['And', 'Or', 'Xor'])
    x = get_val(b, lambda u: u.dt == 'b', lambda: b.new_input('b', rand_shape(b)))
    y = operand_like(b, x, 'b')
    return emit_binary(b, op, x, y)


def g_where(b):
    rng = b.rng
    x = get_val(b, lambda u: u.dt in NUMERIC, lambda: b.new_input('f32', rand_shape(b)))   # ORT: no bool Where
    c = b.pick(lambda u: u.dt == 'b' and bcast(b.nc, u.shape, x.shape) is not None)
    if c is None:
        c = b.new_input('b', partner_shape(b, x.shape))
    y = operand_like(b, x, x.dt)
    if rng.random() < 0.5:
        x, y = y, x
    s = bcast(b.nc, c.shape, x.shape, y.shape)
    if s is None or maxel(s, b.nc) > MAXEL:
        raise Skip
    g = max(x.grid, y.grid) if x.grid is not None and y.grid is not None else None
    facts = keep(x.dt, min(x.lo, y.lo), max(x.hi, y.hi), x.exact and y.exact, g)
    return b.node('Where', [c, x, y], [b.out(x.dt, s, facts)])[0]


def g_cast(b):
    rng = b.rng
    v = get_val(b, lambda u: True, lambda: b.new_input('f32', rand_shape(b)))
    to = rng.choices(['f32', 'i64', 'i32', 'b', 'f16', 'u8', 'i8'], [5, 3, 3, 1.5, 0.8, 1, 1])[0]
    if to == v.dt and rng.random() > 0.1:
        raise Skip
    return emit_cast(b, v, to)


def g_transpose(b):
    v = get_val(b, lambda u: u.rank >= 2, lambda: b.new_input('f32', rand_shape(b, 2, 4)))
    perm = list(range(v.rank))
    b.rng.shuffle(perm)
    return emit_transpose(b, v, perm if b.rng.random() < 0.9 else None)


def g_reshape(b):
    rng = b.rng
    v = get_val(b, lambda u: True, lambda: b.new_input('f32', rand_shape(b)))
    if rng.random() < 0.2:
        tot = tuple(numel(v.shape, c) for c in range(b.nc))
        w = b.pick(lambda u: u is not v and u.shape != v.shape and u.rank >= 1 and
                   tuple(numel(u.shape, c) for c in range(b.nc)) == tot, allow_const=False)
        if w is not None:
            return emit_reshape(b, v, w.shape, shape_src=w)
    return emit_reshape(b, v, reshape_dims(b, v.shape))


def g_flatten(b):
    v = get_val(b, lambda u: u.rank >= 1, lambda: b.new_input('f32', rand_shape(b, 2, 4)))
    r = v.rank
    ax = b.rng.randint(0, r)
    shape = (tuple(numel(v.shape[:ax], c) for c in range(b.nc)), tuple(numel(v.shape[ax:], c) for c in range(b.nc)))
    attrs = {}
    if ax != 1 or b.rng.random() < 0.5:
        attrs['axis'] = ax if b.rng.random() < 0.7 or ax in (0, r) else ax - r
    return b.node('Flatten', [v], [b.out(v.dt, shape, keep(v.dt, v.lo, v.hi, v.exact, v.grid))], **attrs)[0]


def g_squeeze(b):
    one = b.one()
    v = b.pick(lambda u: one in u.shape)
    if v is None:
        raise Skip
    ones = [i for i, d in enumerate(v.shape) if d == one]
    partial = any(1 in d and d != one for d in v.shape)
    rng = b.rng
    if not partial and rng.random() < 0.25:
        ax, ins = ones, [v]
    else:
        ax = sorted(rng.sample(ones, rng.randint(1, len(ones))))
        rep = [a if rng.random() < 0.6 else a - v.rank for a in ax]
        rng.shuffle(rep)
        ins = [v, b.ci64(rep)]
    shape = tuple(d for i, d in enumerate(v.shape) if i not in ax)
    return b.node('Squeeze', ins, [b.out(v.dt, shape, keep(v.dt, v.lo, v.hi, v.exact, v.grid))])[0]


def g_unsqueeze(b):
    rng = b.rng
    v = get_val(b, lambda u: u.rank <= 4, lambda: b.new_input('f32', rand_shape(b, 0, 3)))
    k = rng.choice([1, 1, 2])
    if v.rank + k > 6:
        raise Skip
    r = v.rank + k
    ax = sorted(rng.sample(range(r), k))
    shape = list(v.shape)
    for a in ax:
        shape.insert(a, b.one())
    rep = [a if rng.random() < 0.6 else a - r for a in ax]
    rng.shuffle(rep)
    return b.node('Unsqueeze', [v, b.ci64(rep)], [b.out(v.dt, shape, keep(v.dt, v.lo, v.hi, v.exact, v.grid))])[0]


def g_concat(b):
    rng = b.rng
    v = get_val(b, lambda u: u.rank >= 1, lambda: b.new_input('f32', rand_shape(b)))
    ax = rng.randrange(v.rank)
    parts = [v]
    for _ in range(rng.choice([1, 1, 2])):
        r = rng.random()
        if r < 0.2:
            parts.append(v)
            continue
        if r < 0.55:
            u = b.pick(lambda u: u.dt == v.dt and u.rank == v.rank and u is not v and
                       all(u.shape[i] == v.shape[i] for i in range(v.rank) if i != ax))
            if u is not None:
                parts.append(u)
                continue
        shape = list(v.shape)
        shape[ax] = b.sdim(rng.randint(1, 4)) if not b.root.syms or rng.random() < 0.8 else rng.choice(b.root.syms)
        if all(is_static(d) for d in shape) and rng.random() < 0.5:
            parts.append(b.const_rand(v.dt, [d[0] for d in shape]))
        else:
            parts.append(b.new_input(v.dt, shape))
    shape = list(v.shape)
    shape[ax] = tuple(sum(p.shape[ax][c] for p in parts) for c in range(b.nc))
    if maxel(shape, b.nc) > MAXEL:
        raise Skip
    grids = [p.grid for p in parts]
    facts = keep(v.dt, min(p.lo for p in parts), max(p.hi for p in parts), all(p.exact for p in parts),
                 max(grids) if None not in grids else None)
    a = ax if rng.random() < 0.7 else ax - v.rank
    return b.node('Concat', parts, [b.out(v.dt, shape, facts)], axis=a)[0]


def g_split(b):
    rng = b.rng
    v = get_val(b, lambda u: any(min(d) >= 2 for d in u.shape), lambda: b.new_input('f32', rand_shape(b, 1, 3)))
    axes = [i for i, d in enumerate(v.shape) if min(d) >= 2]
    if not axes:
        raise Skip
    ax = rng.choice(axes)
    d = v.shape[ax]
    modes = []
    if is_static(d):
        modes += ['sizes'] * 3
    if b.opset >= 18:
        modes.append('num')
    elif any(all(x % n == 0 for x in d) for n in (2, 3)):
        modes.append('equal')
    if not modes:
        raise Skip
    mode = rng.choice(modes)
    attrs = {}
    ins = [v]
    if mode == 'sizes':
        n = rng.randint(2, min(4, d[0]))
        cuts = sorted(rng.sample(range(1, d[0]), n - 1))
        sizes = [b_ - a_ for a_, b_ in zip([0] + cuts, cuts + [d[0]])]
        ins.append(b.ci64(sizes))
        outs = [b.sdim(s) for s in sizes]
    elif mode == 'equal':
        n = rng.choice([k for k in (2, 3) if all(x % k == 0 for x in d)])
        outs = [tuple(x // n for x in d)] * n
    else:
        n = rng.choice([2, 3])
        ch = [-(-x // n) for x in d]
        last = [x - c * (n - 1) for x, c in zip(d, ch)]
        if min(last) < 1:
            raise Skip
        outs = [tuple(ch)] * (n - 1) + [tuple(last)]
        attrs['num_outputs'] = n
    if ax != 0 or rng.random() < 0.5:
        attrs['axis'] = ax if rng.random() < 0.7 else ax - v.rank
    ovals = []
    for od in outs:
        shape = list(v.shape)
        shape[ax] = od
        ovals.append(b.out(v.dt, shape, keep(v.dt, v.lo, v.hi, v.exact, v.grid)))
    return b.node('Split', ins, ovals, **attrs)[0]


def g_slice(b):
    rng = b.rng
    v = get_val(b, lambda u: u.rank >= 1, lambda: b.new_input('f32', rand_shape(b)))
    r = v.rank
    axes = rng.sample(range(r), rng.randint(1, min(r, 3)))
    starts, ends, steps = [], [], []
    shape = list(v.shape)
    for ax in axes:
        d = v.shape[ax]
        mn = min(d)
        for _ in range(16):
            st = rng.choice([1, 1, 1, 1, 2, 3, -1, -1, -2])
            if st > 0:
                s = rng.choice([0, 0, 1, -1, -2, rng.randint(-mn, mn - 1), -mn - 3])
                e = rng.choice([I64MAX, mn, -1, rng.randint(-mn, mn), 1000, 2**31 - 1])
            else:
                s = rng.choice([-1, I64MAX, mn - 1, rng.randint(-mn, mn - 1), 2**31 - 1, -mn - 2])
                e = rng.choice([I64MIN, -I64MAX, -mn - 1, 0, rng.randint(-mn, mn - 1), -1000])
            lens = tuple(slice_len(x, s, e, st) for x in d)
            if min(lens) >= 1:
                break
        else:
            raise Skip
        starts.append(s)
        ends.append(e)
        steps.append(st)
        shape[ax] = lens
    idt = np.int64 if rng.random() < 0.8 else np.int32
    if idt == np.int32:
        def c32(x):
            return max(-2**31, min(2**31 - 1, x))
        starts, ends = [c32(x) for x in starts], [c32(x) for x in ends]
    axr = [a if rng.random() < 0.7 else a - r for a in axes]
    ins = [v, b.const(np.array(starts, idt)), b.const(np.array(ends, idt))]
    omit_axes = sorted(axes) == list(range(len(axes))) and axes == sorted(axes) and rng.random() < 0.5
    omit_steps = all(s == 1 for s in steps) and rng.random() < 0.5
    if not omit_steps:
        ins += [None if omit_axes else b.const(np.array(axr, idt)), b.const(np.array(steps, idt))]
    elif not omit_axes:
        ins.append(b.const(np.array(axr, idt)))
    return b.node('Slice', ins, [b.out(v.dt, shape, keep(v.dt, v.lo, v.hi, v.exact, v.grid))])[0]


def g_gather(b):
    rng = b.rng
    v = get_val(b, lambda u: u.rank >= 1, lambda: b.new_input('f32', rand_shape(b)))
    ax = rng.randrange(v.rank)
    mn = min(v.shape[ax])
    ind = None
    r = rng.random()
    if r < 0.25:
        ind = b.pick(lambda u: u.dt in ('i32', 'i64') and u.exact and u.lo >= -mn and u.hi <= mn - 1 and u.rank <= 3)
    if ind is None:
        ishape = [rand_dim(b, allow_sym=False, hi=4) for _ in range(rng.choice([0, 1, 1, 1, 2]))]
        idt = rng.choice(['i64', 'i64', 'i32'])
        if r < 0.8 or not b.root.syms:
            nrng = np.random.default_rng(rng.getrandbits(32))
            ind = b.const(nrng.integers(-mn, mn, size=[d[0] for d in ishape]).astype(DTYPES[idt][1]))
        else:
            if ishape and rng.random() < 0.5:
                ishape[0] = rng.choice(b.root.syms)
            ind = b.new_input(idt, ishape, spec=('index', -mn, mn - 1))
    shape = v.shape[:ax] + ind.shape + v.shape[ax + 1:]
    if maxel(shape, b.nc) > MAXEL or len(shape) > 6:
        raise Skip
    attrs = {}
    if ax != 0 or rng.random() < 0.5:
        attrs['axis'] = ax if rng.random() < 0.7 else ax - v.rank
    return b.node('Gather', [v, ind], [b.out(v.dt, shape, keep(v.dt, v.lo, v.hi, v.exact, v.grid))], **attrs)[0]


def g_expand(b):
    rng = b.rng
    v = get_val(b, lambda u: u.rank <= 4, lambda: b.new_input('f32', rand_shape(b, 0, 3)))
    facts = keep(v.dt, v.lo, v.hi, v.exact, v.grid)
    if rng.random() < 0.3:
        w = b.pick(lambda u: u is not v and u.rank >= 1 and (s := bcast(b.nc, v.shape, u.shape)) is not None
                   and maxel(s, b.nc) <= MAXEL)
        if w is not None:
            shp = b.node('Shape', [w], [b.out('i64', (b.sdim(w.rank),), dict(lo=1, hi=64, exact=True, grid=0))])[0]
            return b.node('Expand', [v, shp], [b.out(v.dt, bcast(b.nc, v.shape, w.shape), facts)])[0]
    k = rng.choice([0, 0, 1, 1, 2])
    if v.rank + k > 5:
        k = 0
    target = [rng.randint(1, 3) for _ in range(k)]
    for d in v.shape:
        if d == b.one():
            target.append(rng.choice([1, 2, 3, 4]))
        elif is_static(d):
            target.append(rng.choice([d[0], 1]))
        else:
            target.append(1)
    if k == 0 and v.rank > 1 and rng.random() < 0.15:
        target = target[1:]
    s = bcast(b.nc, v.shape, tuple(b.sdim(t) for t in target))
    if s is None or maxel(s, b.nc) > MAXEL:
        raise Skip
    return b.node('Expand', [v, b.ci64(target)], [b.out(v.dt, s, facts)])[0]


def g_tile(b):
    rng = b.rng
    v = get_val(b, lambda u: u.rank >= 1, lambda: b.new_input('f32', rand_shape(b)))
    reps = [rng.choice([1, 1, 2, 3]) for _ in range(v.rank)]
    shape = [tuple(x * r for x in d) for d, r in zip(v.shape, reps)]
    if maxel(shape, b.nc) > MAXEL:
        raise Skip
    return b.node('Tile', [v, b.ci64(reps)], [b.out(v.dt, shape, keep(v.dt, v.lo, v.hi, v.exact, v.grid))])[0]


def g_pad(b):
    rng = b.rng
    v = get_val(b, lambda u: u.rank >= 1 and u.dt in ('f32', 'i32', 'i64', 'f16'),
                lambda: b.new_input('f32', rand_shape(b)))
    if v.dt not in ('f32', 'i32', 'i64', 'f16'):
        raise Skip
    modes = ['constant'] * 6 + ['reflect'] * 2 + ['edge'] * 2 + (['wrap'] if b.opset >= 19 else [])
    mode = rng.choice(modes)
    r = v.rank
    use_axes = b.opset >= 18 and rng.random() < 0.4
    axes = sorted(rng.sample(range(r), rng.randint(1, r))) if use_axes else list(range(r))
    pb, pe = [], []
    shape = list(v.shape)
    for ax in axes:
        mn = min(v.shape[ax])
        mx = 2 if mode in ('constant', 'edge') else min(2, mn - 1)
        a, c = rng.randint(0, max(mx, 0)), rng.randint(0, max(mx, 0))
        if mode == 'constant' and mn >= 3 and rng.random() < 0.1:
            a = -1
        pb.append(a)
        pe.append(c)
        shape[ax] = tuple(x + a + c for x in v.shape[ax])
    if min(min(d) for d in shape) < 1 or maxel(shape, b.nc) > MAXEL:
        raise Skip
    ins = [v, b.ci64(pb + pe)]
    lo, hi = v.lo, v.hi
    if mode == 'constant' and rng.random() < 0.6:
        cv = rng.choice([0.0, 1.0, -1.0, 0.5]) if v.dt in FLOATS else rng.choice([0, 1, -3])
        ins.append(b.const(np.array(cv, DTYPES[v.dt][1]), grid=1))
        lo, hi = min(lo, cv), max(hi, cv)
    elif mode == 'constant':
        lo, hi = min(lo, 0), max(hi, 0)
    if use_axes:
        while len(ins) < 3:
            ins.append(None)
        ins.append(b.ci64([a if rng.random() < 0.7 else a - r for a in axes]))
    attrs = {}
    if mode != 'constant' or rng.random() < 0.3:
        attrs['mode'] = mode
    g = v.grid if v.grid is None else max(v.grid, 1)
    return b.node('Pad', ins, [b.out(v.dt, shape, keep(v.dt, lo, hi, v.exact, g))], **attrs)[0]


def g_shape(b):
    v = get_val(b, lambda u: u.rank >= 1, lambda: b.new_input('f32', rand_shape(b)))
    r = v.rank
    attrs = {}
    s, e = 0, r
    if b.opset >= 15 and b.rng.random() < 0.4:
        s = b.rng.randrange(0, r)
        e = b.rng.randint(s + 1, r)
        attrs['start'] = s if b.rng.random() < 0.6 else s - r
        if e != r:
            attrs['end'] = e if b.rng.random() < 0.6 else e - r
    dims = v.shape[s:e]
    o = b.node('Shape', [v], [b.out('i64', (b.sdim(e - s),), dict(lo=min(min(d) for d in dims),
                                                                   hi=max(max(d) for d in dims), exact=True, grid=0))],
               **attrs)[0]
    if b.rng.random() < 0.5:
        return emit_cast(b, o, b.rng.choice(['f32', 'i32']))
    return o


def spatial_input(b, nd, nhwc, cmax=40):
    rng = b.rng
    rank = nd + 2
    cax = rank - 1 if nhwc else 1
    sp = [i for i in range(rank) if i not in (0, cax)]

    def ok(u):
        return (u.dt == 'f32' and u.rank == rank and is_static(u.shape[cax]) and u.shape[cax][0] <= cmax
                and all(min(u.shape[i]) >= 2 for i in sp))
    x = b.pick(ok)
    if x is None or rng.random() < 0.15:
        n = rng.choice([b.sdim(1), b.sdim(2)] + (b.root.syms[:1] if b.root.syms else []))
        c = b.sdim(rng.choice([1, 2, 3, 4, 6, 8, 5, 7, 12, 16, 17, 24, 32]))
        big = rng.random() < 0.3
        sps = [b.sdim(rng.randint(3, 16 if big else 9)) if not b.root.syms or rng.random() < 0.75
               else rng.choice(b.root.syms) for _ in range(nd)]
        shape = [n] + (sps + [c] if nhwc else [c] + sps)
        if maxel(shape, b.nc) > 6000:
            raise Skip
        x = b.new_input('f32', shape)
    if nhwc:
        x = emit_transpose(b, x, [0, rank - 1] + list(range(1, rank - 1)))
        b.root.features.add('nhwc')
    return x


def emit_conv(b, x, M, ks, st, dl, pads, g, auto=None, bias=True, W=None):
    rng = b.rng
    nd = len(ks)
    C = x.shape[1][0]
    shape = [x.shape[0], b.sdim(M)]
    for i in range(nd):
        d = x.shape[2 + i]
        od = tuple(conv_out(dc, ks[i], st[i], dl[i], pads[i], pads[nd + i], auto) for dc in d)
        if min(od) < 1:
            raise Skip
        shape.append(od)
    if maxel(shape, b.nc) > MAXEL:
        raise Skip
    W = W or b.const_rand('f32', [M, C // g] + ks, want='small')
    ins = [x, W]
    mb = 0.0
    if bias:
        B = b.const_rand('f32', [M], want='small')
        ins.append(B)
        mb = B.mag()
    attrs = {}
    if rng.random() < 0.7:
        attrs['kernel_shape'] = ks
    if any(s_ != 1 for s_ in st) or rng.random() < 0.3:
        attrs['strides'] = st
    if any(d != 1 for d in dl) or rng.random() < 0.3:
        attrs['dilations'] = dl
    if auto:
        attrs['auto_pad'] = auto
    elif any(pads) or rng.random() < 0.3:
        attrs['pads'] = pads
    if g != 1 or rng.random() < 0.3:
        attrs['group'] = g
    bound = (C // g) * math.prod(ks) * x.mag() * W.mag() + mb
    if g == C and C > 1:
        b.root.features.add('depthwise')
    return b.node('Conv', ins, [b.out('f32', shape, settle('f32', -bound, bound, False, None))], **attrs)[0]


def g_conv(b):
    rng = b.rng
    nd = rng.choice([1, 2, 2, 2])
    nhwc = rng.random() < 0.35
    x = spatial_input(b, nd, nhwc)
    C = x.shape[1][0]
    groups = [1, 1] + ([C] if C > 1 else []) + [g for g in range(2, C) if C % g == 0]
    g = rng.choice(groups)
    if g == C and C > 1:
        M = C * rng.choice([1, 1, 2])
    else:
        M = g * rng.randint(1, max(1, 24 // g))
    ks = [rng.choice([1, 2, 3, 3, 5, 7]) for _ in range(nd)]
    st = [rng.choice([1, 1, 2]) for _ in range(nd)]
    dl = [rng.choice([1, 1, 1, 2]) for _ in range(nd)]
    auto = None if rng.random() < 0.75 else rng.choice(['SAME_UPPER', 'SAME_LOWER', 'VALID'])
    if auto in ('SAME_UPPER', 'SAME_LOWER'):
        dl = [1] * nd    # ORT: "Dilation not supported for AutoPadType::SAME_UPPER or SAME_LOWER"
    pads = [rng.randint(0, min(2, dl[i] * (ks[i] - 1))) for i in range(nd)] + \
           [rng.randint(0, min(2, dl[i] * (ks[i] - 1))) for i in range(nd)]
    if auto or rng.random() < 0.3:
        pads = [0] * (2 * nd)
    y = emit_conv(b, x, M, ks, st, dl, pads, g, auto, rng.random() < 0.6)
    if nhwc:
        rank = nd + 2
        if rng.random() < 0.3:
            y = emit_unary(b, rng.choice(['Relu', 'Sigmoid']), y)
        y = emit_transpose(b, y, [0] + list(range(2, rank)) + [1])
    return y


def emit_act(b, y, act):
    """Activations as exporters write them (the fusable ones among them)."""
    if act is None:
        return y
    if act == 'Relu6':
        return emit_clip(b, y, 0.0, 6.0)
    if act == 'ClipAttr':
        if b.opset >= 11:
            return emit_clip(b, y, -1.0, 1.0)
    if act == 'ClipMinOnly':
        return emit_clip(b, y, 0.0, None)
    if act == 'ClipMaxOnly':
        return emit_unary(b, 'Clip', y, _max=2.0)
    if act == 'ClipDynamic':
        # bounds from a graph input: not a constant, must not be folded into the Conv
        lo = b.new_input('f32', (), spec=('grid', 2, -1.0, 0.0))
        o = b.out('f32', y.shape, settle('f32', -1.0, max(y.hi, 0.0), False, None))
        return b.node('Clip', [y, lo], [o])[0]
    if act == 'Swish':
        return emit_binary(b, 'Mul', y, emit_unary(b, 'Sigmoid', y))
    if act == 'HardSwish' and b.opset < 14:
        act = 'Relu'
    return emit_unary(b, act, y, **({'alpha': 0.1} if act == 'LeakyRelu' else {}))


ACTS = [None, 'Relu', 'Relu', 'Relu6', 'ClipAttr', 'ClipMinOnly', 'ClipMaxOnly', 'ClipDynamic', 'LeakyRelu',
        'HardSwish', 'Sigmoid', 'Swish', 'Tanh']


def g_conv_block(b):
    """Conv [-> BatchNorm] -> activation [-> residual Add [-> Relu]] [-> MaxPool], the shapes the
    Conv fusions (activation, residual, max pool, pointwise+depthwise) look for, and near misses."""
    rng = b.rng
    x = spatial_input(b, 2, rng.random() < 0.2)
    C = x.shape[1][0]
    kind = rng.choice(['pw', 'pw', 'dw', 'std', 'std'])
    if kind == 'pw':
        M, ks, g, st, pads = rng.choice([4, 6, 8, 12, 16, 5, 24, 32, 9]), [1, 1], 1, [1, 1], [0] * 4
        if rng.random() < 0.1:
            st = [2, 2]
    elif kind == 'dw':
        k = rng.choice([3, 3, 5])
        M, ks, g, st = C * rng.choice([1, 1, 2]), [k, k], C, [rng.choice([1, 1, 2])] * 2
        pads = [k // 2] * 4 if rng.random() < 0.8 else [k // 2, k // 2, k // 2 - 1, k // 2 + 1]
    else:
        k = rng.choice([3, 3, 5, 2])
        M, ks, g, st = rng.choice([2, 4, 8, 3, 16]), [k, k], 1, [rng.choice([1, 1, 2])] * 2
        pads = [k // 2] * 4 if rng.random() < 0.6 else [0] * 4
    if min(min(x.shape[2]), min(x.shape[3])) < 2:
        raise Skip
    y = emit_conv(b, x, M, ks, st, [1, 1], pads, g, None, rng.random() < 0.8)
    conv_out_v = y
    if rng.random() < 0.25:
        y = g_batchnorm_on(b, y)
    order = rng.random()
    act = rng.choice(ACTS)
    if order < 0.5:
        y = emit_act(b, y, act)
    if rng.random() < 0.35:
        r = rng.random()
        if r < 0.4:
            other = b.new_input('f32', y.shape, want='small')
        elif r < 0.6:
            other = b.const_rand('f32', rng.choice([[1, M, 1, 1], [M, 1, 1], [1], []]), want='small')
        elif r < 0.75:
            other = conv_out_v if conv_out_v.shape == y.shape else y
        else:
            other = b.pick(lambda u: u.dt == 'f32' and u.shape == y.shape and u is not y) or \
                b.new_input('f32', y.shape, want='small')
        y = emit_binary(b, 'Add', *((y, other) if rng.random() < 0.6 else (other, y)))
        b.root.features.add('residual')
        if rng.random() < 0.5:
            y = emit_unary(b, 'Relu', y)
    if order >= 0.5:
        y = emit_act(b, y, act)
    if kind == 'pw' and rng.random() < 0.5:
        k = rng.choice([3, 5])
        s2 = rng.choice([1, 1, 2])
        y = emit_conv(b, y, M, [k, k], [s2, s2], [1, 1], [k // 2] * 4, M, None, rng.random() < 0.8)
        y = emit_act(b, y, rng.choice(ACTS))
        b.root.features.add('pw-dw')
    if rng.random() < 0.35:
        k, s2, p = rng.choice([(2, 2, 0), (2, 2, 0), (3, 2, 1), (2, 1, 0), (3, 1, 1), (2, 2, 1)])
        H, W = y.shape[2], y.shape[3]
        shape = [y.shape[0], y.shape[1]] + [tuple(conv_out(dc, k, s2, 1, p, p) for dc in d) for d in (H, W)]
        if min(min(d) for d in shape[2:]) >= 1:
            attrs = dict(kernel_shape=[k, k], strides=[s2, s2])
            if p:
                attrs['pads'] = [p] * 4
            y = b.node('MaxPool', [y], [b.out('f32', shape, keep('f32', y.lo, y.hi, y.exact, y.grid))], **attrs)[0]
            b.root.features.add('conv-maxpool')
    if rng.random() < 0.15:
        # a second reader of the Conv's own output: no fusion may swallow it
        emit_reduce(b, 'ReduceMean', conv_out_v, [2, 3], 1)
    return y


def g_batchnorm_on(b, x):
    rng = b.rng
    C = x.shape[1][0]
    nrng = np.random.default_rng(rng.getrandbits(32))
    ins = [x] + [b.const(a.astype(np.float32)) for a in (
        nrng.uniform(-1.5, 1.5, C), nrng.uniform(-1, 1, C), nrng.uniform(-1, 1, C), nrng.uniform(0.5, 2, C))]
    bound = (x.mag() + 1) / math.sqrt(0.5) * 1.5 + 1
    return b.node('BatchNormalization', ins, [b.out('f32', x.shape, settle('f32', -bound, bound, False, None))])[0]


def emit_matmul(b, a, bv):
    K = a.shape[-1]
    as_ = a.shape if a.rank >= 2 else (b.one(), K)
    bs_ = bv.shape if bv.rank >= 2 else (K, b.one())
    if as_[-1] != bs_[-2]:
        raise Skip
    batch = bcast(b.nc, as_[:-2], bs_[:-2])
    if batch is None:
        raise Skip
    shape = list(batch)
    if a.rank >= 2:
        shape.append(as_[-2])
    if bv.rank >= 2:
        shape.append(bs_[-1])
    if maxel(shape, b.nc) > MAXEL:
        raise Skip
    bound = max(K) * a.mag() * bv.mag()
    facts = settle(a.dt, -bound, bound, False, None) if a.dt in FLOATS else settle(a.dt, -bound, bound, True, 0)
    return b.node('MatMul', [a, bv], [b.out(a.dt, shape, facts)])[0]


def emit_gelu(b, x, variant):
    """GELU written op by op (erf form / tanh form), or a near miss that must not become a Gelu."""
    rng = b.rng

    def c(v):
        return b.const(np.array(v, np.float32))

    def mul(p, q):
        return emit_binary(b, 'Mul', *((p, q) if rng.random() < 0.5 else (q, p)))

    def add(p, q):
        return emit_binary(b, 'Add', *((p, q) if rng.random() < 0.5 else (q, p)))
    off = variant == 'near'
    which = rng.randrange(4) if off else -1
    if rng.random() < 0.65:
        if rng.random() < 0.5:
            d = emit_binary(b, 'Div', x, c(1.4142135 if which != 0 else 1.3))
        else:
            d = mul(x, c(0.70710677 if which != 0 else 0.75))
        e = emit_unary(b, 'Erf', d)
        a = add(e, c(1.0 if which != 1 else 0.9))
        if rng.random() < 0.5:
            y = mul(mul(x, a), c(0.5 if which != 2 else 0.55))
        else:
            y = mul(mul(x, c(0.5 if which != 2 else 0.55)), a)
        b.root.features.add('gelu-erf' + ('-near' if off else ''))
    else:
        if x.mag() > 8:
            raise Skip
        x3 = emit_binary(b, 'Pow', x, c(3.0)) if x.lo > 0.05 and rng.random() < 0.5 else mul(mul(x, x), x)
        inner = add(x, mul(x3, c(0.044715 if which != 0 else 0.05)))
        t = emit_unary(b, 'Tanh', mul(inner, c(0.7978846 if which != 1 else 0.8)))
        y = mul(mul(x, c(0.5 if which != 2 else 0.55)), add(t, c(1.0)))
        b.root.features.add('gelu-tanh' + ('-near' if off else ''))
    return y


def g_linear(b):
    """MatMul by a constant matrix [+ bias Add] [-> GELU / activation]: FuseMatMulBias, FuseGelu,
    FuseTransposeMatMul (constant B written transposed) and near misses."""
    rng = b.rng
    x = b.pick(lambda u: u.dt == 'f32' and 2 <= u.rank <= 3 and is_static(u.shape[-1]) and u.shape[-1][0] <= 64)
    if x is None or rng.random() < 0.3:
        x = b.new_input('f32', rand_shape(b, 1, 2, limit=64) + (b.sdim(rng.choice([4, 8, 16, 32])),), want='small')
    K = x.shape[-1][0]
    N = rng.choice([1, 4, 8, 16, 24])
    if rng.random() < 0.2:
        wt = b.const_rand('f32', [N, K], want='small')
        w = emit_transpose(b, wt, [1, 0])
        b.root.features.add('transpose-matmul')
    else:
        w = b.const_rand('f32', [K, N], want='small')
    y = emit_matmul(b, x, w)
    if rng.random() < 0.7:
        bs = rng.choice([[N], [N], [1, N], [1, 1, N], []] + ([[x.shape[-2][0], N]] if x.rank >= 2 and is_static(
            x.shape[-2]) else []))
        bias = b.const_rand('f32', bs, want='small')
        y = emit_binary(b, 'Add', *((y, bias) if rng.random() < 0.7 else (bias, y)))
        b.root.features.add('matmul-bias')
    r = rng.random()
    if r < 0.35:
        y = emit_gelu(b, y, 'exact' if rng.random() < 0.7 else 'near')
    elif r < 0.6:
        y = emit_act(b, y, rng.choice(['Relu', 'Tanh', 'Sigmoid', 'Swish']))
    return y


def g_attention(b):
    """Multi-head attention as BERT-style exporters write it op by op (FuseAttention), with the
    variations it must accept or refuse (scale by Div or Mul, a mask, the key transposed in one or
    two steps, softmax over another axis)."""
    rng = b.rng
    H, D = rng.choice([1, 2, 2, 3]), rng.choice([2, 4])
    E = H * D
    Bd = rng.choice([b.sdim(1), b.sdim(2)] + b.root.syms[:1])
    S = rng.choice([b.sdim(rng.randint(2, 6))] + b.root.syms[-1:])
    x = b.new_input('f32', (Bd, S, b.sdim(E)), want='small')
    if maxel(x.shape, b.nc) * H > MAXEL // 4:
        raise Skip

    def proj(v):
        if rng.random() < 0.25:
            return v
        w = b.const_rand('f32', [E, E], want='small')
        y = emit_matmul(b, v, w)
        if rng.random() < 0.5:
            y = emit_binary(b, 'Add', y, b.const_rand('f32', [E], want='small'))
        return y

    def heads(v):
        return emit_reshape(b, v, (v.shape[0], v.shape[1], b.sdim(H), b.sdim(D)))
    q, k, v = proj(x), proj(x), proj(x)
    qh = emit_transpose(b, heads(q), [0, 2, 1, 3])
    if rng.random() < 0.5:
        kt = emit_transpose(b, heads(k), [0, 2, 3, 1])
    else:
        kt = emit_transpose(b, emit_transpose(b, heads(k), [0, 2, 1, 3]), [0, 1, 3, 2])
    vh = emit_transpose(b, heads(v), [0, 2, 1, 3])
    s = emit_matmul(b, qh, kt)
    r = rng.random()
    if r < 0.4:
        s = emit_binary(b, 'Div', s, b.const(np.array(math.sqrt(D), np.float32)))
    elif r < 0.8:
        s = emit_binary(b, 'Mul', s, b.const(np.array(1 / math.sqrt(D), np.float32)))
    if rng.random() < 0.4:
        T = S
        ms = rng.choice([(Bd, b.one(), b.one(), T), (b.one(), b.one(), S, T), (S, T)])
        if all(is_static(d) for d in ms) and rng.random() < 0.5:
            m = b.const(np.where(np.random.default_rng(rng.getrandbits(32)).random([d[0] for d in ms]) < 0.3,
                                 -10000.0, 0.0).astype(np.float32))
        else:
            m = b.new_input('f32', ms, spec=('grid', 0, -4.0, 0.0))
        s = emit_binary(b, 'Add', s, m)
    ax = -1 if rng.random() < 0.85 else rng.choice([3, 2])
    p = b.node('Softmax', [s], [b.out('f32', s.shape, dict(lo=0.0, hi=1.0, exact=False, grid=None))],
               **({'axis': ax} if ax != -1 or rng.random() < 0.5 else {}))[0]
    o = emit_matmul(b, p, vh)
    o = emit_transpose(b, o, [0, 2, 1, 3])
    b.root.features.add('attention')
    return emit_reshape(b, o, (o.shape[0], o.shape[1], b.sdim(E)))


def g_layernorm(b):
    """LayerNormalization, after a residual Add (+ bias) as FuseSkipLayerNorm looks for, or written
    out op by op (ReduceMean, Sub, Pow, ...)."""
    rng = b.rng
    x = b.pick(lambda u: u.dt == 'f32' and 2 <= u.rank <= 3 and is_static(u.shape[-1]) and u.shape[-1][0] >= 2)
    if x is None or rng.random() < 0.3:
        x = b.new_input('f32', rand_shape(b, 1, 2, limit=64) + (b.sdim(rng.choice([4, 8, 16])),), want='small')
    E = x.shape[-1][0]
    if rng.random() < 0.6:
        r = rng.random()
        skip = b.new_input('f32', x.shape, want='small') if r < 0.6 else b.const_rand(
            'f32', rng.choice([[E], [1, E]]), want='small')
        x = emit_binary(b, 'Add', *((x, skip) if rng.random() < 0.6 else (skip, x)))
        if rng.random() < 0.4:
            x = emit_binary(b, 'Add', x, b.const_rand('f32', [E], want='small'))
        b.root.features.add('skip-add')
    if b.opset >= 17 and rng.random() < 0.75:
        ax = -1 if rng.random() < 0.8 else rng.randrange(-x.rank, 0)
        nshape = [d[0] for d in x.shape[ax:]]
        if not all(is_static(d) for d in x.shape[ax:]):
            ax, nshape = -1, [E]
        nrng = np.random.default_rng(rng.getrandbits(32))
        gamma = b.const(nrng.uniform(0.5, 1.5, nshape).astype(np.float32))
        ins = [x, gamma]
        if rng.random() < 0.8:
            ins.append(b.const(nrng.uniform(-0.5, 0.5, nshape).astype(np.float32)))
        attrs = {}
        if ax != -1 or rng.random() < 0.3:
            attrs['axis'] = ax
        if rng.random() < 0.4:
            # not BERT's 1e-12: a row whose values agree to the last bit or two then divides
            # rounding noise by 1e-6, and either implementation's answer is as good as the other's
            attrs['epsilon'] = rng.choice([1e-5, 1e-6, 1e-3])
        b.root.features.add('layernorm')
        return b.node('LayerNormalization', ins, [b.out('f32', x.shape, settle('f32', -8.0, 8.0, False, None))],
                      **attrs)[0]
    # op by op
    mean = emit_reduce(b, 'ReduceMean', x, [-1], 1)
    d = emit_binary(b, 'Sub', x, mean)
    sq = emit_binary(b, 'Mul', d, d) if rng.random() < 0.5 else \
        emit_binary(b, 'Pow', d, b.const(np.array(2.0, np.float32)))
    var = emit_reduce(b, 'ReduceMean', sq, [-1], 1)
    den = emit_unary(b, 'Sqrt', emit_binary(b, 'Add', var, b.const(np.array(1e-5, np.float32))))
    y = b.node('Div', [d, den], [b.out('f32', x.shape, settle('f32', -8.0, 8.0, False, None))])[0]
    b.root.features.add('layernorm-decomposed')
    return emit_binary(b, 'Add', emit_binary(b, 'Mul', y, b.const_rand('f32', [E], want='small')),
                       b.const_rand('f32', [E], want='small'))


def g_transpose_matmul(b):
    """MatMul(A, Transpose(K)) with the last two axes swapped (FuseTransposeMatMul) or another perm."""
    rng = b.rng
    k = b.pick(lambda u: u.dt == 'f32' and 2 <= u.rank <= 4)
    if k is None or rng.random() < 0.3:
        k = b.new_input('f32', rand_shape(b, 2, 4, limit=400), want='small')
    r = k.rank
    perm = list(range(r))
    if rng.random() < 0.75:
        perm[-1], perm[-2] = perm[-2], perm[-1]
    else:
        rng.shuffle(perm)
    kt = emit_transpose(b, k, perm)
    M = rng.choice([b.sdim(rng.randint(1, 5))] + b.root.syms[:1])
    a = b.new_input('f32', tuple(kt.shape[:-2]) + (M, kt.shape[-2]), want='small')
    b.root.features.add('transpose-matmul')
    return emit_matmul(b, a, kt)


def g_pool(b):
    rng = b.rng
    op = rng.choice(['MaxPool', 'AveragePool'])
    nd = rng.choice([1, 2, 2])
    x = spatial_input(b, nd, rng.random() < 0.15)
    ks = [rng.choice([1, 2, 2, 3, 3]) for _ in range(nd)]
    st = [rng.choice([1, 2, 2]) for _ in range(nd)]
    dl = [1] * nd
    if op == 'MaxPool' or b.opset >= 19:
        dl = [rng.choice([1, 1, 1, 2]) for _ in range(nd)]
    auto = None if rng.random() < 0.85 else rng.choice(['SAME_UPPER', 'SAME_LOWER', 'VALID'])
    if auto in ('SAME_UPPER', 'SAME_LOWER'):
        # ORT pools: SAME with dilations gives ceil(d/s)-1 outputs (spec: ceil(d/s)), and a stride
        # above the kernel ("padding values must be non-negative") is refused
        dl = [1] * nd
        if any(ks[i] < st[i] for i in range(nd)):
            auto = None
    pads = [0] * (2 * nd)
    if not auto and rng.random() < 0.5:
        pads = [rng.randint(0, ks[i % nd] - 1) for i in range(2 * nd)]
    cip = rng.choice([0, 1]) if op == 'AveragePool' else 0
    ceil = 0
    if not auto and rng.random() < 0.3 and not cip:
        ceil = 1
    shape = list(x.shape[:2])
    for i in range(nd):
        d = x.shape[2 + i]
        od = tuple(conv_out(dc, ks[i], st[i], dl[i], pads[i], pads[nd + i], auto, ceil) for dc in d)
        if ceil and any((o - 1) * st[i] >= dc + pads[i] for o, dc in zip(od, d)):
            raise Skip
        if min(od) < 1:
            raise Skip
        shape.append(od)
    attrs = dict(kernel_shape=ks)
    if any(s != 1 for s in st) or rng.random() < 0.3:
        attrs['strides'] = st
    if any(d != 1 for d in dl):
        attrs['dilations'] = dl
    if auto:
        attrs['auto_pad'] = auto
    elif any(pads) or rng.random() < 0.2:
        attrs['pads'] = pads
    if ceil or rng.random() < 0.2:
        attrs['ceil_mode'] = ceil
    outs = []
    if op == 'MaxPool':
        outs.append(b.out('f32', shape, keep('f32', x.lo, x.hi, x.exact, x.grid)))
        if rng.random() < 0.15 and not auto:
            outs.append(b.out('i64', shape, dict(lo=0, hi=maxel(x.shape, b.nc), exact=True, grid=0),
                              hidden=not x.exact))
            if rng.random() < 0.4:
                attrs['storage_order'] = rng.choice([0, 1])
    else:
        if cip or rng.random() < 0.3:
            attrs['count_include_pad'] = cip
        lo, hi = x.lo, x.hi
        if cip and any(pads):
            lo, hi = min(lo, 0), max(hi, 0)
        outs.append(b.out('f32', shape, settle('f32', lo, hi, False, None)))
    return b.node(op, [x], outs, **attrs)[0]


def g_globalpool(b):
    op = b.rng.choice(['GlobalMaxPool', 'GlobalAveragePool'])
    x = spatial_input(b, b.rng.choice([1, 2]), b.rng.random() < 0.1, cmax=64)
    shape = list(x.shape[:2]) + [b.one()] * (x.rank - 2)
    facts = keep('f32', x.lo, x.hi, x.exact, x.grid) if op == 'GlobalMaxPool' else settle('f32', x.lo, x.hi, False, None)
    return b.node(op, [x], [b.out('f32', shape, facts)])[0]


def g_batchnorm(b):
    rng = b.rng
    x = get_val(b, lambda u: u.dt == 'f32' and u.rank >= 2 and is_static(u.shape[1]) and u.shape[1][0] <= 64,
                lambda: spatial_input(b, rng.choice([1, 2]), False))
    C = x.shape[1][0]
    nrng = np.random.default_rng(rng.getrandbits(32))
    scale = b.const(nrng.uniform(-1.5, 1.5, C).astype(np.float32))
    bias = b.const(nrng.uniform(-1, 1, C).astype(np.float32))
    mean = b.const(nrng.uniform(-1, 1, C).astype(np.float32))
    var = b.const(nrng.uniform(0.5, 2, C).astype(np.float32))
    attrs = {}
    if rng.random() < 0.4:
        attrs['epsilon'] = rng.choice([1e-5, 1e-3, 0.01])
    if rng.random() < 0.2:
        attrs['momentum'] = 0.9
    if b.opset >= 14 and rng.random() < 0.3:
        attrs['training_mode'] = 0
    bound = (x.mag() + 1) / math.sqrt(0.5) * 1.5 + 1
    return b.node('BatchNormalization', [x, scale, bias, mean, var],
                  [b.out('f32', x.shape, settle('f32', -bound, bound, False, None))], **attrs)[0]


def g_matmul(b):
    rng = b.rng
    dts = ('f32', 'f32', 'f32', 'f32', 'i32', 'i64')
    a = get_val(b, lambda u: u.dt in dts and 1 <= u.rank <= 4, lambda: b.new_input('f32', rand_shape(b, 1, 3)))
    if a.dt not in dts:
        raise Skip
    if a.dt in INTS and a.mag() > 100:
        raise Skip
    K = a.shape[-1]
    N = rng.randint(1, 8)
    r = rng.random()
    if r < 0.5 and is_static(K):
        bshape = [K[0]] if rng.random() < 0.1 else ([K[0], N] if rng.random() < 0.8 else [2, K[0], N])
        bv = b.const_rand(a.dt, bshape, want='small')
    else:
        bv = None
        if r < 0.7:
            bv = b.pick(lambda u: u.dt == a.dt and u.rank >= 2 and u.shape[-2] == K and u is not a)
        if bv is None:
            batch = list(a.shape[:-2])
            batch = batch[rng.randint(0, len(batch)):] if batch else []
            batch = [b.one() if rng.random() < 0.3 else d for d in batch]
            bv = b.new_input(a.dt, batch + [K, b.sdim(N)], want='small')
    return emit_matmul(b, a, bv)


def g_gemm(b):
    rng = b.rng
    a = b.pick(lambda u: u.dt == 'f32' and u.rank == 2)
    if a is None:
        v = b.pick(lambda u: u.dt == 'f32' and u.rank >= 2)
        if v is not None and rng.random() < 0.6:
            shape = (v.shape[0], tuple(numel(v.shape[1:], c) for c in range(b.nc)))
            a = b.node('Flatten', [v], [b.out('f32', shape, keep('f32', v.lo, v.hi, v.exact, v.grid))])[0]
        else:
            a = b.new_input('f32', rand_shape(b, 2, 2))
    ta = rng.random() < 0.25
    tb = rng.random() < 0.4
    M, K = (a.shape[1], a.shape[0]) if ta else (a.shape[0], a.shape[1])
    N = rng.randint(1, 10)
    if maxel((M, b.sdim(N)), b.nc) > MAXEL:
        raise Skip
    if is_static(K) and rng.random() < 0.75:
        bv = b.const_rand('f32', [N, K[0]] if tb else [K[0], N], want='small')
    else:
        bv = b.new_input('f32', [b.sdim(N), K] if tb else [K, b.sdim(N)], want='small')
    ins = [a, bv]
    cm = 0.0
    if rng.random() < 0.75:
        opts = [[], [N], [1, N]] + ([[M[0], N], [M[0], 1]] if is_static(M) else [])
        C = b.const_rand('f32', rng.choice(opts), want='small')
        ins.append(C)
        cm = C.mag()
    attrs = {}
    al = be = 1.0
    if rng.random() < 0.4:
        al = attrs['alpha'] = rng.choice([0.5, 2.0, -1.0, 1.3])
    if len(ins) == 3 and rng.random() < 0.4:
        be = attrs['beta'] = rng.choice([0.5, 2.0, 0.0, -0.7])
    if ta:
        attrs['transA'] = 1
    if tb:
        attrs['transB'] = 1
    bound = abs(al) * max(K) * a.mag() * bv.mag() + abs(be) * cm
    return b.node('Gemm', ins, [b.out('f32', (M, b.sdim(N)), settle('f32', -bound, bound, False, None))], **attrs)[0]


REDUCES = ['ReduceSum', 'ReduceSum', 'ReduceMean', 'ReduceMean', 'ReduceMax', 'ReduceMin', 'ReduceProd', 'ReduceL1',
           'ReduceL2', 'ReduceLogSum', 'ReduceLogSumExp', 'ReduceSumSquare']


def g_reduce(b):
    rng = b.rng
    op = rng.choice(REDUCES)
    dts = ('f32', 'i32', 'i64') if op in ('ReduceSum', 'ReduceProd') else ('f32',)
    if op in ('ReduceMax', 'ReduceMin'):
        dts = ('f32', 'i32', 'i64', 'u8', 'i8', 'f16')
    v = get_val(b, lambda u: u.dt in dts and u.rank >= 1, lambda: b.new_input('f32', rand_shape(b)))
    if v.dt not in dts or v.rank == 0:
        raise Skip
    if op == 'ReduceLogSum':
        v = make_positive(b, v, 0.1)
    if op == 'ReduceProd' and v.mag() > 2:
        if v.dt not in FLOATS:
            raise Skip
        v = emit_unary(b, 'Tanh', v)
    if op == 'ReduceLogSumExp' and v.hi > 20:
        v = emit_clip(b, v, None, 5.0)
    r = v.rank
    k = rng.random()
    noop = None
    empty = False
    if k < 0.15:
        axes = None
    elif k < 0.22 and reduce_input_form(op, b.opset):
        axes, empty = None, True
    else:
        axes = rng.sample(range(r), rng.randint(1, r))
        axes = [a if rng.random() < 0.7 else a - r for a in axes]
    if reduce_input_form(op, b.opset) and rng.random() < 0.4:
        noop = rng.choice([0, 0, 1])
    return emit_reduce(b, op, v, axes, rng.choice([0, 1, 1]), noop, empty)


def g_argmax(b):
    rng = b.rng
    op = rng.choice(['ArgMax', 'ArgMin'])
    v = get_val(b, lambda u: u.dt in NUMERIC and u.rank >= 1 and u.exact,
                lambda: b.new_input(rng.choice(['f32', 'i32']), rand_shape(b)))
    if v.dt not in NUMERIC or not v.exact or v.rank == 0:
        raise Skip
    ax = rng.randrange(v.rank)
    kd = rng.choice([0, 1, 1])
    attrs = {}
    if ax != 0 or rng.random() < 0.5:
        attrs['axis'] = ax if rng.random() < 0.7 else ax - v.rank
    if kd != 1 or rng.random() < 0.4:
        attrs['keepdims'] = kd
    if rng.random() < 0.3:
        attrs['select_last_index'] = rng.choice([0, 1])
    shape = [d if i != ax else b.one() for i, d in enumerate(v.shape) if kd or i != ax]
    return b.node(op, [v], [b.out('i64', shape, dict(lo=0, hi=max(v.shape[ax]) - 1, exact=True, grid=0))], **attrs)[0]


def g_cumsum(b):
    rng = b.rng
    v = get_val(b, lambda u: u.dt in ('f32', 'i32', 'i64') and u.rank >= 1, lambda: b.new_input('f32', rand_shape(b)))
    if v.dt not in ('f32', 'i32', 'i64') or v.rank == 0:
        raise Skip
    ax = rng.randrange(v.rank)
    a = ax if rng.random() < 0.7 else ax - v.rank
    axv = b.const(np.array(a, rng.choice([np.int64, np.int32])))
    n = max(v.shape[ax])
    attrs = {}
    if rng.random() < 0.4:
        attrs['exclusive'] = rng.choice([0, 1])
    if rng.random() < 0.4:
        attrs['reverse'] = rng.choice([0, 1])
    lo, hi = min(v.lo * n, v.lo, 0), max(v.hi * n, v.hi, 0)
    return b.node('CumSum', [v, axv], [b.out(v.dt, v.shape, settle(v.dt, lo, hi, v.exact, v.grid))], **attrs)[0]


def g_topk(b):
    rng = b.rng
    v = get_val(b, lambda u: u.dt in ('f32', 'i32', 'i64') and u.rank >= 1, lambda: b.new_input('f32', rand_shape(b)))
    if v.dt not in ('f32', 'i32', 'i64') or v.rank == 0:
        raise Skip
    ax = rng.randrange(v.rank)
    mn = min(v.shape[ax])
    k = rng.randint(1, min(mn, 5))
    attrs = {}
    if ax != v.rank - 1 or rng.random() < 0.5:
        attrs['axis'] = ax if rng.random() < 0.6 else ax - v.rank
    if rng.random() < 0.5:
        attrs['largest'] = rng.choice([0, 1])
    if rng.random() < 0.3:
        attrs['sorted'] = 1
    shape = list(v.shape)
    shape[ax] = b.sdim(k)
    vals = b.out(v.dt, shape, keep(v.dt, v.lo, v.hi, v.exact, v.grid))
    idx = b.out('i64', shape, dict(lo=0, hi=max(v.shape[ax]) - 1, exact=True, grid=0), hidden=not v.exact)
    return b.node('TopK', [v, b.ci64([k])], [vals, idx], **attrs)[0]


# ---- control flow ------------------------------------------------------------------------

def operand_into(sb, v, dt, small=True):
    return operand_like(sb, v, dt, want='small' if small else None, into=True)


def chain_step(sb, v):
    rng = sb.rng
    if v.dt == 'b':
        if rng.random() < 0.4:
            return emit_unary(sb, 'Not', v)
        return emit_binary(sb, rng.choice(['And', 'Or', 'Xor']), v, operand_into(sb, v, 'b'))
    if sb.iter_val is not None and rng.random() < 0.25:
        it = emit_cast(sb, sb.iter_val, v.dt)
        if v.dt in FLOATS:
            it = emit_binary(sb, 'Mul', it, sb.const(np.array(0.5, DTYPES[v.dt][1]), grid=1))
        return emit_binary(sb, rng.choice(['Add', 'Sub']), v, it)
    if v.dt in FLOATS:
        r = rng.random()
        if r < 0.4:
            return emit_unary(sb, rng.choice(['Relu', 'Tanh', 'Sigmoid', 'Abs', 'Neg', 'Erf']), v)
        op = rng.choice(['Add', 'Sub', 'Mul', 'Max', 'Min'])
        u = operand_into(sb, v, v.dt)
        if op == 'Mul' and (sb.bounded or u.mag() > 2):
            u = sb.const(np.array(rng.choice([0.5, -0.5, 0.75, 1.0]), DTYPES[v.dt][1]), grid=2)
        return emit_binary(sb, op, v, u)
    if v.dt in ('i32', 'i64'):
        op = rng.choice(['Add', 'Sub', 'Max', 'Min', 'Neg', 'Abs'])
        if op in ('Neg', 'Abs'):
            return emit_unary(sb, op, v)
        if sb.bounded:
            u = sb.const(np.array(rng.randint(-3, 3), DTYPES[v.dt][1]))
        else:
            u = operand_into(sb, v, v.dt)
        return emit_binary(sb, op, v, u)
    raise Skip


def chain(sb, v, steps):
    for _ in range(steps):
        try:
            v = chain_step(sb, v)
        except Skip:
            pass
    return v


def sub_vi(v):
    return helper.make_tensor_value_info(v.name, DTYPES[v.dt][0], [d[0] if is_static(d) else None for d in v.shape])


def make_cond(b):
    rng = b.rng
    r = rng.random()
    if r < 0.3:
        x = b.pick(lambda u: u.rank >= 1)
        if x is None:
            raise Skip
        ax = rng.randrange(x.rank)
        d = emit_shape_dim(b, x, ax)
        thr = b.ci64([rng.randint(min(x.shape[ax][c] for c in range(b.nc)), max(x.shape[ax]))])
        c = emit_binary(b, rng.choice(['Greater', 'Less', 'Equal', 'GreaterOrEqual']), d, thr)
        b.root.features.add('shape-cond')
    else:
        x = get_val(b, lambda u: u.dt in ('f32', 'i32', 'i64') and u.exact and u.rank >= 1,
                    lambda: b.new_input(rng.choice(['f32', 'i64']), rand_shape(b)))
        if not x.exact or x.dt not in ('f32', 'i32', 'i64') or x.rank == 0:
            raise Skip
        red = emit_reduce(b, rng.choice(['ReduceMax', 'ReduceMin']), x, None, 0)
        t = rng.uniform(x.lo, x.hi)
        t = round(t * 8) / 8 if x.dt in FLOATS else int(round(t))
        c = emit_binary(b, rng.choice(['Greater', 'Less', 'GreaterOrEqual']), red,
                        b.const(np.array(t, DTYPES[x.dt][1]), grid=3))
    if rng.random() < 0.2:
        c = b.node('Reshape', [c, b.ci64([1])], [b.out('b', (b.one(),), dict(lo=0, hi=1, exact=True, grid=0))])[0]
    return c


def g_if(b):
    rng = b.rng
    cond = make_cond(b)
    nout = rng.choice([1, 1, 2])
    outs, thens, elses = [], [], []
    tb, eb = Builder(rng, b.opset, b.nc, parent=b), Builder(rng, b.opset, b.nc, parent=b)
    for _ in range(nout):
        t = get_val(b, lambda u: u.dt in ('f32', 'i32', 'i64', 'b') and u is not cond,
                    lambda: b.new_input('f32', rand_shape(b)))
        if t.dt not in ('f32', 'i32', 'i64', 'b'):
            raise Skip
        o1 = chain(tb, t, rng.randint(0, 3))
        u = b.pick(lambda w: w.dt == t.dt and w.shape == t.shape) if rng.random() < 0.5 else None
        o2 = chain(eb, u or t, rng.randint(0, 3))
        if o1 is t or (o1.name in [x.name for x in thens]):
            o1 = tb.node('Identity', [o1], [tb.out(o1.dt, o1.shape, keep(o1.dt, o1.lo, o1.hi, o1.exact, o1.grid))])[0]
        if o2.kind != 'node' or o2 in (u, t) or o2.name in [x.name for x in elses]:
            o2 = eb.node('Identity', [o2], [eb.out(o2.dt, o2.shape, keep(o2.dt, o2.lo, o2.hi, o2.exact, o2.grid))])[0]
        if o1.shape != t.shape or o2.shape != t.shape:
            raise Skip
        thens.append(o1)
        elses.append(o2)
        g = max(o1.grid, o2.grid) if o1.grid is not None and o2.grid is not None else None
        outs.append(b.out(t.dt, t.shape, keep(t.dt, min(o1.lo, o2.lo), max(o1.hi, o2.hi), o1.exact and o2.exact, g)))
    tg = helper.make_graph(tb.nodes, 'then_' + str(b.root.counter), [], [sub_vi(o) for o in thens])
    eg = helper.make_graph(eb.nodes, 'else_' + str(b.root.counter), [], [sub_vi(o) for o in elses])
    b.node('If', [cond], outs, then_branch=tg, else_branch=eg)
    return outs[0]


def g_loop(b):
    rng = b.rng
    early = rng.randint(0, 3) if rng.random() < 0.3 else None
    r = rng.random()
    if r < 0.55:
        m = rng.randint(1, 4)
        M = b.const(np.array(m, np.int64))
        counts = (m,) * b.nc
    elif r < 0.85:
        x = b.pick(lambda u: u.rank >= 1 and any(1 <= min(d) and max(d) <= 8 for d in u.shape))
        if x is None:
            raise Skip
        ax = rng.choice([i for i, d in enumerate(x.shape) if 1 <= min(d) and max(d) <= 8])
        s = b.node('Shape', [x], [b.out('i64', (b.sdim(x.rank),), dict(lo=1, hi=64, exact=True, grid=0))])[0]
        M = b.node('Gather', [s, b.const(np.array(ax, np.int64))],
                   [b.out('i64', (), dict(lo=min(x.shape[ax]), hi=max(x.shape[ax]), exact=True, grid=0))], axis=0)[0]
        counts = x.shape[ax]
        b.root.features.add('shape-trip-count')
    else:
        M = None
        counts = (I64MAX,) * b.nc
        if early is None:
            early = rng.randint(0, 3)
    if early is not None:
        counts = tuple(min(c, early + 1) for c in counts)
    condv = None
    # With a trip count and no cond input the spec says the body's cond output is ignored (a for
    # loop) while ONNX Runtime (and onnx.reference) stop when it turns false: an early exit always
    # comes with a cond input here.
    if M is None or early is not None or rng.random() < 0.5:
        condv = b.const(np.array(True))
    sb = Builder(rng, b.opset, b.nc, parent=b)
    sb.bounded = True
    it = Val(b.fresh('iter'), 'i64', (), 0, max(counts) - 1, True, 0, kind='in')
    ci = Val(b.fresh('cond'), 'b', (), 0, 1, True, 0, kind='in')
    sb.iter_val = it
    carried = []
    for _ in range(rng.choice([0, 1, 1, 2])):
        v = b.pick(lambda u: u.dt in ('f32', 'i32', 'i64') and maxel(u.shape, b.nc) <= 2000)
        if v is None:
            continue
        if v.dt in FLOATS:
            lo, hi, ex = min(v.lo, -2.0), max(v.hi, 2.0), False
        else:
            # the body adds constants and the iteration number, at most 8 times
            lo, hi, ex = min(v.lo, 0) - 100, max(v.hi, 0) + 100, True
        vin = Val(b.fresh('carried'), v.dt, v.shape, lo, hi, ex, None if v.dt in FLOATS else 0, kind='in')
        carried.append((v, vin))
    nscan = rng.choice([0, 1, 1, 2]) if carried else rng.choice([1, 1, 2])
    for _, vin in carried:
        sb.pool.append(vin)
    couts = []
    for v, vin in carried:
        o = chain(sb, vin, rng.randint(1, 3))
        if o.dt in FLOATS and rng.random() < 0.7:
            o = emit_unary(sb, rng.choice(['Tanh', 'Sigmoid']), o)
        if o is vin or o.kind != 'node' or o in couts:
            o = sb.node('Identity', [o], [sb.out(o.dt, o.shape, keep(o.dt, o.lo, o.hi, o.exact, o.grid))])[0]
        if o.shape != v.shape:
            raise Skip
        couts.append(o)
    scans = []
    for _ in range(nscan):
        cand = [u for u in sb.pool if u.kind == 'node' and not u.hidden]
        if cand and rng.random() < 0.6:
            s = rng.choice(cand)
        else:
            base = get_val(b, lambda u: u.dt in ('f32', 'i32', 'i64') and maxel(u.shape, b.nc) <= 500,
                           lambda: b.new_input('f32', rand_shape(b, 1, 2, limit=200)))
            s = chain(sb, base, rng.randint(1, 2))
            if s is base:
                continue
        if s.name in [x.name for x in scans] or s.name in [x.name for x in couts]:
            s = sb.node('Identity', [s], [sb.out(s.dt, s.shape, keep(s.dt, s.lo, s.hi, s.exact, s.grid))])[0]
        if max(counts) * maxel(s.shape, b.nc) > MAXEL:
            continue
        scans.append(s)
    if not couts and not scans:
        raise Skip
    if early is not None:
        co = emit_binary(sb, 'Less', it, sb.const(np.array(early, np.int64)))
        b.root.features.add('loop-early-exit')
    else:
        co = sb.node('Identity', [ci], [sb.out('b', (), dict(lo=0, hi=1, exact=True, grid=0))])[0]
    body = helper.make_graph(sb.nodes, 'body_' + str(b.root.counter),
                             [sub_vi(it), sub_vi(ci)] + [sub_vi(vin) for _, vin in carried],
                             [sub_vi(co)] + [sub_vi(o) for o in couts] + [sub_vi(s) for s in scans])
    outs = []
    for (v, vin), o in zip(carried, couts):
        lo, hi = min(v.lo, o.lo), max(v.hi, o.hi)
        outs.append(b.out(v.dt, v.shape, settle(v.dt, lo, hi, v.dt not in FLOATS, 0 if v.dt not in FLOATS else None)))
    for s in scans:
        outs.append(b.out(s.dt, (counts,) + s.shape, keep(s.dt, s.lo, s.hi, s.exact and s.dt not in FLOATS,
                                                           s.grid if s.dt not in FLOATS else None)))
    b.node('Loop', [M, condv] + [v for v, _ in carried], outs, body=body)
    if scans:
        b.root.features.add('loop-scan')
    return outs[0]


def g_empty(b):
    """A tensor with a zero-sized dim (Slice start == end, Split with a 0 part, Gather with no
    indices, an empty input) read by an op that must cope with it."""
    rng = b.rng
    v = get_val(b, lambda u: u.rank >= 1 and u.dt in NUMERIC, lambda: b.new_input('f32', rand_shape(b, 1, 3)))
    if v.rank == 0 or v.dt not in NUMERIC:
        raise Skip
    ax = rng.randrange(v.rank)
    shape = list(v.shape)
    shape[ax] = (0,) * b.nc
    facts = keep(v.dt, v.lo, v.hi, v.exact, v.grid)
    how = rng.choice(['slice', 'split', 'input', 'gather'])
    if how == 'slice':
        k = rng.randint(0, min(v.shape[ax]))
        e = b.node('Slice', [v, b.ci64([k]), b.ci64([k]), b.ci64([ax])], [b.out(v.dt, shape, facts)])[0]
    elif how == 'split' and is_static(v.shape[ax]):
        d = v.shape[ax][0]
        sizes = [0, d] if rng.random() < 0.5 else [d, 0]
        outs = [b.out(v.dt, shape if s_ == 0 else v.shape, facts) for s_ in sizes]
        b.node('Split', [v, b.ci64(sizes)], outs, axis=ax)
        e = outs[sizes.index(0)]
    elif how == 'gather':
        shape = v.shape[:ax] + ((0,) * b.nc,) + v.shape[ax + 1:]
        e = b.node('Gather', [v, b.const(np.zeros((0,), np.int64))], [b.out(v.dt, shape, facts)], axis=ax)[0]
    else:
        e = b.new_input(v.dt, shape)
        e.empty = True
    b.root.features.add('empty')
    sink = rng.choice(['concat', 'concat', 'binary', 'reduce', 'shape', 'reshape', 'unary', 'matmul'])
    if sink == 'concat':
        return b.node('Concat', [v, e] if rng.random() < 0.5 else [e, v], [b.out(v.dt, v.shape, facts)], axis=ax)[0]
    if sink == 'binary' and v.dt in ('f32', 'i32', 'i64'):
        return emit_binary(b, rng.choice(['Add', 'Mul', 'Max']), e, operand_like(b, e, e.dt, pool_p=0))
    if sink == 'reduce' and v.dt in ('f32', 'i32', 'i64'):
        op = rng.choice(['ReduceSum', 'ReduceSum', 'ReduceProd', 'ReduceSumSquare'] + (['ReduceL1', 'ReduceL2']
                                                                                        if v.dt == 'f32' else []))
        return emit_reduce(b, op, e, [ax], rng.choice([0, 1]))
    if sink == 'shape':
        o = b.node('Shape', [e], [b.out('i64', (b.sdim(e.rank),), dict(lo=0, hi=64, exact=True, grid=0))])[0]
        return emit_cast(b, o, 'f32')
    if sink == 'reshape':
        return b.node('Reshape', [e, b.ci64([-1])], [b.out(v.dt, ((0,) * b.nc,), facts)])[0]
    if sink == 'matmul' and v.dt == 'f32' and ax == v.rank - 1 and v.rank >= 2:
        return emit_matmul(b, e, b.const(np.zeros((0, rng.randint(1, 5)), np.float32)))
    return emit_unary(b, rng.choice(['Relu', 'Abs']) if v.dt == 'f32' else 'Abs', e)


def g_nhwc_chain(b):
    """Convolutions as tf2onnx writes a Keras model: NHWC activations, Transpose [0,3,1,2] ->
    Conv -> Transpose [0,2,3,1] around every conv, bias/activation/residual in NHWC between them,
    then a flatten or a mean over H, W and a dense layer."""
    rng = b.rng
    x = b.pick(lambda u: u.dt == 'f32' and u.rank == 4 and is_static(u.shape[3]) and u.shape[3][0] <= 32
               and min(u.shape[1]) >= 3 and min(u.shape[2]) >= 3)
    if x is None or rng.random() < 0.4:
        n = rng.choice([b.sdim(1), b.sdim(2)] + b.root.syms[:1])
        hw = [b.sdim(rng.randint(4, 12)) if not b.root.syms or rng.random() < 0.8 else rng.choice(b.root.syms)
              for _ in range(2)]
        x = b.new_input('f32', (n, hw[0], hw[1], b.sdim(rng.choice([1, 3, 4, 8]))), want='small')
        if maxel(x.shape, b.nc) > 5000:
            raise Skip
    b.root.features.add('nhwc-chain')
    for _ in range(rng.randint(1, 3)):
        t = emit_transpose(b, x, [0, 3, 1, 2])
        C = t.shape[1][0]
        k = rng.choice([1, 3, 3, 5])
        s_ = rng.choice([1, 1, 2])
        dw = C > 1 and rng.random() < 0.3
        M = C if dw else rng.choice([4, 8, 16, 6])
        pads = [k // 2] * 4 if rng.random() < 0.7 else [0] * 4
        auto = 'SAME_UPPER' if rng.random() < 0.2 else None
        if auto:
            pads = [0] * 4
        y = emit_conv(b, t, M, [k, k], [s_, s_], [1, 1], pads, C if dw else 1, auto, rng.random() < 0.3)
        if rng.random() < 0.3:
            y = emit_act(b, y, rng.choice(['Relu', 'Relu6']))
        y = emit_transpose(b, y, [0, 2, 3, 1])
        if rng.random() < 0.6:
            y = emit_binary(b, 'Add', y, b.const_rand('f32', [M], want='small'))
        if rng.random() < 0.3 and y.shape == x.shape:
            y = emit_binary(b, 'Add', y, x)
            b.root.features.add('residual')
        y = emit_act(b, y, rng.choice([None, 'Relu', 'Relu', 'Relu6', 'Swish']))
        x = y
        if maxel(x.shape, b.nc) > 6000:
            break
    r = rng.random()
    if r < 0.4:
        x = emit_reduce(b, 'ReduceMean', x, [1, 2], rng.choice([0, 1]))
        x = emit_reshape(b, x, (x.shape[0], tuple(numel(x.shape[1:], c) for c in range(b.nc))))
    elif r < 0.7 and all(is_static(d) for d in x.shape[1:]):
        x = emit_reshape(b, x, (x.shape[0], b.sdim(numel(x.shape[1:], 0))))
    else:
        return x
    if x.rank == 2 and is_static(x.shape[1]) and x.shape[1][0] <= 2048:
        w = b.const_rand('f32', [x.shape[1][0], rng.choice([2, 10])], want='small')
        x = emit_matmul(b, x, w)
        x = emit_binary(b, 'Add', x, b.const_rand('f32', [w.shape[1][0]], want='small'))
        if rng.random() < 0.5:
            x = emit_unary(b, 'Softmax', x, axis=-1)
    return x


GENERATORS = [
    (g_unary, 14), (g_arith, 10), (g_div, 3), (g_pow, 2), (g_maxmin, 3), (g_compare, 4), (g_logic, 2),
    (g_where, 3), (g_cast, 5), (g_transpose, 4), (g_reshape, 6), (g_flatten, 2), (g_squeeze, 2),
    (g_unsqueeze, 3), (g_concat, 4), (g_split, 3), (g_slice, 4), (g_gather, 4), (g_expand, 3), (g_tile, 2),
    (g_pad, 3), (g_shape, 1.5), (g_conv, 5), (g_pool, 3), (g_globalpool, 1.5), (g_batchnorm, 2),
    (g_matmul, 4), (g_gemm, 2), (g_reduce, 6), (g_argmax, 2), (g_cumsum, 2), (g_topk, 2), (g_if, 2.5),
    (g_loop, 2.5), (g_conv_block, 4), (g_linear, 3), (g_attention, 1.5), (g_layernorm, 2),
    (g_transpose_matmul, 1.5), (g_empty, 1.5), (g_nhwc_chain, 2),
]


def generate(seed, index):
    rng = random.Random(f'difftest:{seed}:{index}')
    opset = rng.randint(13, 21)
    nc = 2 if rng.random() < 0.45 else 1
    b = Builder(rng, opset, nc)
    b.ir = rng.randint(MIN_IR[opset], 10)
    b.style = rng.choices(['plain', 'tf', 'torch'], [6, 2, 2])[0]
    if nc == 2:
        for i in range(rng.randint(1, 3)):
            a = rng.randint(2, 6)
            c = rng.choice([x for x in range(2, 7) if x != a])
            if (a, c) not in b.syms:
                b.syms.append((a, c))
                b.symname[(a, c)] = SYM_NAMES[i] if rng.random() < 0.7 else f'unk__{i}'
    for _ in range(rng.randint(1, 2)):
        dt = rng.choices(['f32', 'i64', 'i32', 'b'], [8, 1.5, 1, 0.7])[0]
        b.new_input(dt, rand_shape(b, 1, 4))
    target = rng.randint(2, 15)
    gens, weights = zip(*GENERATORS)
    tries = 0
    while len(b.nodes) < target and tries < 80:
        tries += 1
        gen = rng.choices(gens, weights)[0]
        n0 = len(b.nodes)
        try:
            gen(b)
        except Skip:
            pass
        if len(b.nodes) > 30:
            # too big: drop this step's nodes and the values they made
            gone = {o for n in b.nodes[n0:] for o in n.output}
            del b.nodes[n0:]
            b.pool = [v for v in b.pool if v.name not in gone]
            for o in gone:
                b.vals.pop(o, None)
            break
    b.decl_seed = rng.getrandbits(32)
    return b


# --------------------------------------------------------------------------------------------
# Model assembly and validation

def declare_input(b, v, rng, mode, minus1_ok):
    dims = []
    for d in v.shape:
        if not is_static(d):
            r = rng.random()
            if mode == 'unknown' and r < 0.5:
                dims.append(None)
            elif mode == 'minus1' and r < 0.6 and minus1_ok:
                dims.append(-1)
            else:
                if d not in b.symname:
                    b.symname[d] = f'd{len(b.symname)}'
                dims.append(b.symname[d])
        elif rng.random() < 0.04:
            b.counter += 1
            dims.append(f'fixed_{b.counter}')
        else:
            dims.append(d[0])
    return helper.make_tensor_value_info(v.name, DTYPES[v.dt][0], dims)


def assemble(b, minus1_ok=True):
    rng = random.Random(b.decl_seed)
    mode = rng.choices(['param', 'unknown', 'minus1'], [6, 2, 2])[0]
    inputs = [declare_input(b, v, rng, mode, minus1_ok) for v in b.inputs]
    leaves = [v for v in b.vals.values() if v.kind == 'node' and not v.hidden and b.used[v.name] == 0]
    if not leaves:
        return None
    inner = [v for v in b.vals.values() if v.kind == 'node' and not v.hidden and b.used[v.name] > 0]
    outs = list(leaves)
    if inner and rng.random() < 0.2:
        outs.append(rng.choice(inner))
    rng.shuffle(outs)
    outputs = [helper.make_tensor_value_info(v.name, DTYPES[v.dt][0],
                                             [d[0] if is_static(d) else None for d in v.shape]) for v in outs]
    g = helper.make_graph(b.nodes, rng.choice(['difftest', 'main_graph', 'tf2onnx']), inputs, outputs,
                          initializer=b.inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid('', b.opset)], producer_name='difftest')
    m.ir_version = b.ir
    return m, [v.name for v in outs]


def for_onnx_tools(m):
    """onnx's checker and shape inference abort (std::clamp assertion in Slice's inference) on
    inputs declared with dim_value -1: they get a copy with those dims as dim_params instead."""
    if not any(d.HasField('dim_value') and d.dim_value < 0
               for i in m.graph.input for d in i.type.tensor_type.shape.dim):
        return m
    m = copy.deepcopy(m)
    for i in m.graph.input:
        for k, d in enumerate(i.type.tensor_type.shape.dim):
            if d.HasField('dim_value') and d.dim_value < 0:
                d.dim_param = f'minus1_{i.name}_{k}'
    return m


def ort_session(model_bytes):
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.log_severity_level = 3
    return ort.InferenceSession(model_bytes, so, providers=['CPUExecutionProvider'])


def onnx_elem(arr):
    return DTYPES[NP2DT[arr.dtype]][0]


def exposed(model, names=None):
    """model plus every top-level node output as a graph output (value_info dropped)."""
    m = copy.deepcopy(model)
    del m.graph.value_info[:]
    have = {o.name for o in m.graph.output}
    inits = {i.name for i in m.graph.initializer}
    for n in m.graph.node:
        for o in n.output:
            if o and o not in have and o not in inits and (names is None or o in names):
                have.add(o)
                m.graph.output.append(onnx.ValueInfoProto(name=o))
    return m


def finite_ok(arrs):
    for a in arrs:
        if a.dtype.kind == 'f' and a.size:
            with np.errstate(over='ignore', invalid='ignore'):
                if not np.all(np.isfinite(a)) or np.max(np.abs(a.astype(np.float64))) > 1e6:
                    return False
    return True


class Stats:
    def __init__(self):
        self.c = Counter()
        self.ort_msgs = Counter()
        self.msgs = Counter()


def build_graph(seed, index, stats, verbose=False, opts=None):
    """Returns (model, cases, tolerance, features) or None when discarded."""
    b = generate(seed, index)
    if not b.nodes:
        stats.c['empty'] += 1
        return None
    r = assemble(b)
    if r is None:
        stats.c['empty'] += 1
        return None
    model, outs = r
    try:
        onnx.checker.check_model(for_onnx_tools(model), full_check=True)
    except Exception as e:
        stats.c['checker'] += 1
        stats.msgs[str(e).splitlines()[0][:160]] += 1
        if verbose:
            print(f'  [checker] index={index}: {str(e).splitlines()[0][:300]}')
        return None
    # ORT on the model with every intermediate exposed (its element types from the tracked values)
    em = exposed(model)
    for o in em.graph.output:
        if not o.type.HasField('tensor_type'):
            v = b.vals.get(o.name)
            if v is None:
                continue
            o.CopyFrom(helper.make_tensor_value_info(o.name, DTYPES[v.dt][0], [None] * v.rank))
    try:
        sess = ort_session(em.SerializeToString())
    except Exception as e:
        stats.c['ort-invalid'] += 1
        stats.ort_msgs[re.sub(r'\d+', '#', str(e).splitlines()[0])[:200]] += 1
        if verbose:
            print(f'  [ort] index={index}: {str(e)[:300]}')
        return None
    onames = [o.name for o in em.graph.output]
    cases = []
    for c in range(b.nc):
        for attempt in range(3):
            nrng = np.random.default_rng([seed, index, c, attempt])
            feeds = {}
            for v in b.inputs:
                shape = tuple(d[c] for d in v.shape)
                feeds[v.name] = spec_data(nrng, v.dt, b.specs[v.name], shape)
            try:
                res = sess.run(None, feeds)
            except Exception as e:
                stats.c['ort-invalid'] += 1
                stats.ort_msgs[re.sub(r'\d+', '#', str(e).splitlines()[0])[:200]] += 1
                if verbose:
                    print(f'  [ort-run] index={index}: {str(e)[:300]}')
                return None
            vals = dict(zip(onames, res))
            if finite_ok(res):
                break
        else:
            stats.c['numerics'] += 1
            return None
        for name, v in b.vals.items():
            arr = vals.get(name)
            if arr is None:
                continue
            want = tuple(d[c] for d in v.shape)
            if arr.shape != want or NP2DT.get(arr.dtype) != v.dt:
                stats.c['tracking'] += 1
                node = next((n for n in b.nodes if name in n.output), None)
                msg = f'{node.op_type if node else "?"}: tracked {v.dt}{list(want)} ort {arr.dtype}{list(arr.shape)}'
                stats.msgs['tracking ' + re.sub(r'\d+', '#', msg)] += 1
                if verbose:
                    if node is not None:
                        msg += ' inputs ' + ' '.join(
                            str(vals[i].shape if i in vals else feeds.get(i, np.zeros(0)).shape)
                            for i in node.input) + ' ' + str(
                            [(a.name, helper.get_attribute_value(a)) for a in node.attribute
                             if a.type != onnx.AttributeProto.GRAPH])
                    print(f'  [tracking] index={index} case={c} {name} {msg}')
                return None
        for o in outs:
            a, v = vals[o], b.vals[o]
            if a.dtype.kind == 'f' and not v.exact and a.size and np.max(np.abs(a)) < 1e-3:
                # an inexact output near zero (cancellation): rounding noise would exceed the
                # relative tolerance on a 1e-6 scale floor
                stats.c['tiny-output'] += 1
                return None
        cases.append((feeds, {o: vals[o] for o in outs}))
    # extras: shape hints for the intermediates, sometimes a deliberately wrong one
    rng = random.Random(b.decl_seed + 1)
    final = model
    r = rng.random()
    p_wrong = (opts or {}).get('wrong_vi', 0.15)
    if r < p_wrong + 0.2:
        final = copy.deepcopy(model)
        feats = set()
        try:
            inferred = shape_inference.infer_shapes(for_onnx_tools(model))
            if rng.random() < 0.6:
                final.graph.value_info.extend(inferred.graph.value_info)
                feats.add('value-info')
        except Exception:
            pass
        if r < p_wrong:
            names = [v.name for v in b.vals.values() if v.kind == 'node' and v.name not in outs]
            if names:
                name = rng.choice(names)
                v = b.vals[name]
                rank = max(0, v.rank + rng.choice([0, 0, 0, 1, -1]))
                dims = [rng.randint(1, 9) for _ in range(rank)]
                if rank == v.rank and all(dd == d[0] for dd, d in zip(dims, v.shape)):
                    dims = [x + 1 for x in dims] or [2]
                keepv = [x for x in final.graph.value_info if x.name != name]
                del final.graph.value_info[:]
                final.graph.value_info.extend(keepv)
                final.graph.value_info.append(helper.make_tensor_value_info(name, DTYPES[v.dt][0], dims))
                feats.add('wrong-value-info')
        if final.graph.value_info:
            try:
                s2 = ort_session(final.SerializeToString())
                for feeds, refs in cases:
                    got = dict(zip([o.name for o in final.graph.output], s2.run(None, feeds)))
                    for k, a in refs.items():
                        if not (got[k].shape == a.shape and np.array_equal(got[k], a, equal_nan=True)):
                            raise RuntimeError('ORT output changed with the shape hints')
                b.features |= feats
            except Exception:
                final = model
        else:
            final = model
    tol = 0.01 if b.has_f16 else 0.001
    feats = set(b.features)
    if b.nc == 2:
        feats.add('symbolic')
    return final, cases, tol, feats


# --------------------------------------------------------------------------------------------
# Corpus

def safe_name(s):
    return re.sub(r'[^A-Za-z0-9_.-]', '_', s)[:80]


def write_entry(outdir, name, model, cases, tol, source):
    d = os.path.join(outdir, name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, 'model.onnx'), 'wb') as f:
        f.write(model.SerializeToString())
    entry = {'name': name, 'model': f'{name}/model.onnx', 'source': source, 'sha256': '', 'producer': 'difftest',
             'domain': 'random', 'tolerance': tol, 'cases': []}
    for ci, (feeds, outs) in enumerate(cases):
        os.makedirs(os.path.join(d, f'c{ci}'), exist_ok=True)
        step = {'inputs': {}, 'outputs': {}}
        for kind, arrs in (('in', feeds), ('out', outs)):
            taken = set()
            for k, a in arrs.items():
                fn = safe_name(k)
                while fn in taken:
                    fn += '_'
                taken.add(fn)
                rel = f'{name}/c{ci}/s0_{kind}_{fn}.npy'
                np.save(os.path.join(outdir, rel), carr(a))
                step['inputs' if kind == 'in' else 'outputs'][k] = rel
        entry['cases'].append({'name': f'c{ci}', 'state': {}, 'steps': [step]})
    return entry


def write_index(path, entries):
    with open(path, 'w') as f:
        f.write('{"models": [\n')
        f.write(',\n'.join('  ' + json.dumps(e) for e in entries))
        f.write('\n]}\n')


# --------------------------------------------------------------------------------------------
# Our runtime

class Outcome:
    def __init__(self, status, message='', max_rel_diff=None, case=None):
        self.status, self.message, self.max_rel_diff, self.case = status, message or '', max_rel_diff, case

    def __repr__(self):
        d = f' max_rel_diff={self.max_rel_diff:.3g}' if isinstance(self.max_rel_diff, (int, float)) else ''
        return f'{self.status}{d}: {self.message[:400]}'


def run_runner(runner, index_path, timeout):
    """{model: Outcome of its first non-passing case (or pass)}, plus (rc, output)."""
    report = index_path + '.report.json'
    if os.path.exists(report):
        os.remove(report)
    try:
        p = subprocess.run([runner, index_path, '--json', report], capture_output=True, text=True, timeout=timeout,
                           errors='replace')
        rc, text = p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode(errors='replace') if isinstance(e.stdout, bytes) else (e.stdout or '')
        return None, 'timeout', out
    if not os.path.exists(report):
        return None, rc, text
    try:
        with open(report) as f:
            rows = json.load(f)
    except Exception:
        return None, rc, text
    res = {}
    for r in rows:
        m = r.get('model')
        st = r.get('status', 'error')
        o = Outcome(st, r.get('message', ''), r.get('max_rel_diff'), r.get('case'))
        if m not in res or (res[m].status == 'pass' and st != 'pass'):
            res[m] = o
    return res, rc, text


def run_models(runner, outdir, entries, timeout=900):
    """Runs our runtime over entries (written under outdir); returns {name: Outcome}."""
    idx = os.path.join(outdir, '.batch.json')
    write_index(idx, entries)
    res, rc, text = run_runner(runner, idx, timeout)
    res = res or {}
    missing = [e for e in entries if e['name'] not in res]
    if missing and not (isinstance(rc, int) and rc in (0, 1)):
        # the runner crashed or hung: run the models it did not report one by one
        for e in missing:
            one = os.path.join(outdir, '.one.json')
            write_index(one, [e])
            r1, rc1, text1 = run_runner(runner, one, 120)
            if r1 and e['name'] in r1:
                res[e['name']] = r1[e['name']]
            elif rc1 == 'timeout':
                res[e['name']] = Outcome('timeout', 'runner timed out')
            else:
                res[e['name']] = Outcome('crash', f'runner exit {rc1}: {text1.strip()[-300:]}')
    for e in entries:
        if e['name'] not in res:
            res[e['name']] = Outcome('crash', f'runner exit {rc}, no report for this model: {text.strip()[-300:]}')
    return res


# --------------------------------------------------------------------------------------------
# Minimization

def attr_graphs(n):
    for a in n.attribute:
        if a.type == onnx.AttributeProto.GRAPH:
            yield a.g
        elif a.type == onnx.AttributeProto.GRAPHS:
            yield from a.graphs


def outer_refs(g):
    defined = {i.name for i in g.input} | {i.name for i in g.initializer}
    refs = set()
    for n in g.node:
        for i in n.input:
            if i and i not in defined:
                refs.add(i)
        for sg in attr_graphs(n):
            refs |= outer_refs(sg) - defined
        defined |= {o for o in n.output if o}
    for o in g.output:
        if o.name not in defined:
            refs.add(o.name)
    return refs


def node_uses(n):
    u = [i for i in n.input if i]
    for sg in attr_graphs(n):
        u += sorted(outer_refs(sg))
    return u


def rename_uses(g, old, new):
    for n in g.node:
        for k, i in enumerate(n.input):
            if i == old:
                n.input[k] = new
        for sg in attr_graphs(n):
            rename_uses(sg, old, new)
            for o in sg.output:
                if o.name == old:
                    o.name = new


def prune_dead_nodes(g):
    """Drops the nodes of g no output depends on; returns the names the kept nodes and outputs read."""
    need = {o.name for o in g.output}
    keepn = []
    for n in reversed(list(g.node)):
        if any(o in need for o in n.output):
            keepn.append(n)
            need |= set(node_uses(n))
    keepn.reverse()
    del g.node[:]
    g.node.extend(keepn)
    return need


def dce(m, feeds):
    g = m.graph
    need = prune_dead_nodes(g)
    ins = [i for i in g.input if i.name in need]
    del g.input[:]
    g.input.extend(ins)
    inits = [i for i in g.initializer if i.name in need]
    del g.initializer[:]
    g.initializer.extend(inits)
    names = need | {o for n in g.node for o in n.output}
    vis = [v for v in g.value_info if v.name in names]
    del g.value_info[:]
    g.value_info.extend(vis)
    return m, {k: v for k, v in feeds.items() if k in {i.name for i in g.input}}


def inf_tt(inf, name):
    t = inf.get(name)
    return t.tensor_type if t is not None and t.HasField('tensor_type') else None


def sub_dce(g):
    need = prune_dead_nodes(g)
    vis = [v for v in g.value_info if v.name in need]
    del g.value_info[:]
    g.value_info.extend(vis)


def rank_only_vi(name, arr):
    return helper.make_tensor_value_info(name, onnx_elem(arr), [None] * arr.ndim)


class Minimizer:
    def __init__(self, runner, workdir, tol, budget_s=150, max_tries=400):
        self.runner, self.workdir, self.tol = runner, workdir, tol
        self.deadline = time.time() + budget_s
        self.tries_left = max_tries

    def ort_eval(self, m, feeds):
        em = exposed(m)
        inf = {}
        try:
            im = shape_inference.infer_shapes(for_onnx_tools(m))

            def walk(g):
                for v in list(g.input) + list(g.value_info) + list(g.output):
                    if v.type.HasField('tensor_type') and v.name not in inf:
                        inf[v.name] = v.type
                for n in g.node:
                    for sg in attr_graphs(n):
                        walk(sg)
            walk(im.graph)
        except Exception:
            pass
        for o in em.graph.output:
            if not o.type.HasField('tensor_type') and o.name in inf:
                o.type.CopyFrom(inf[o.name])
                o.type.tensor_type.ClearField('shape')
        # graph outputs need a type; the ones inference could not type are left out
        outs = [o for o in em.graph.output if o.type.HasField('tensor_type')]
        del em.graph.output[:]
        em.graph.output.extend(outs)
        try:
            sess = ort_session(em.SerializeToString())
            res = sess.run(None, feeds)
        except Exception:
            return None
        vals = dict(zip([o.name for o in em.graph.output], res))
        refs = {o.name: vals[o.name] for o in m.graph.output if o.name in vals}
        if len(refs) != len(m.graph.output) or not finite_ok(list(refs.values())):
            return None
        for a in refs.values():
            if a.dtype.kind == 'f' and a.size and 0 < np.max(np.abs(a)) < 1e-3:
                return None      # a near-zero output: rounding noise alone could fail it
        return refs, vals, inf

    def ours(self, m, feeds, refs):
        d = tempfile.mkdtemp(prefix='min', dir=self.workdir)
        try:
            e = write_entry(d, 'min', m, [(feeds, refs)], self.tol, 'difftest minimization')
            res = run_models(self.runner, d, [e], timeout=120)
            return res['min']
        finally:
            shutil.rmtree(d, ignore_errors=True)

    def still(self, m, feeds, sig):
        self.tries_left -= 1
        try:
            onnx.checker.check_model(for_onnx_tools(m))
        except Exception:
            return None
        ev = self.ort_eval(m, feeds)
        if ev is None:
            return None
        o = self.ours(m, feeds, ev[0])
        if same_failure(sig, o):
            return ev, o
        return None

    def candidates(self, m, feeds, vals, inf):
        g = m.graph
        inits = {i.name for i in g.initializer}
        inputs = {i.name for i in g.input}
        nodes = list(g.node)
        # 1. drop a graph output
        if len(g.output) > 1:
            for k in range(len(g.output)):
                c = copy.deepcopy(m)
                del c.graph.output[k]
                yield 'drop output', c, feeds
        # 2. truncate at a node: its inputs become the outputs, it and what depends on it go
        for j, n in enumerate(nodes):
            newouts = [i for i in node_uses(n) if i not in inits and i not in inputs and i in vals]
            if not newouts:
                continue
            dead = set(n.output)
            keepn = []
            for k, n2 in enumerate(nodes):
                if k == j or any(u in dead for u in node_uses(n2)):
                    dead |= set(n2.output)
                else:
                    keepn.append(n2)
            c = copy.deepcopy(m)
            del c.graph.node[:]
            c.graph.node.extend(copy.deepcopy(keepn))
            outs = [o for o in c.graph.output if o.name not in dead]
            have = {o.name for o in outs}
            for i in dict.fromkeys(newouts):
                if i not in have:
                    outs.append(rank_only_vi(i, vals[i]))
            del c.graph.output[:]
            c.graph.output.extend(outs)
            yield f'truncate at {n.op_type}', c, feeds
        # 3. cut: a node's computed inputs become graph inputs fed with ORT's values
        for j in reversed(range(len(nodes))):
            n = nodes[j]
            cut = [i for i in dict.fromkeys(node_uses(n)) if i not in inits and i not in inputs and i in vals]
            if not cut:
                continue
            sets = [cut] + ([[i] for i in cut] if len(cut) > 1 else [])
            for s_ in sets:
                c = copy.deepcopy(m)
                f2 = dict(feeds)
                cn = c.graph.node[j]
                for i in s_:
                    nm = f'cut_{zlib_hash(i)}'
                    for k, x in enumerate(cn.input):
                        if x == i:
                            cn.input[k] = nm
                    for sg in attr_graphs(cn):
                        rename_uses(sg, i, nm)
                    if i in inf and inf[i].tensor_type.HasField('shape'):
                        vi = onnx.ValueInfoProto(name=nm)
                        vi.type.CopyFrom(inf[i])
                    else:
                        vi = helper.make_tensor_value_info(nm, onnx_elem(vals[i]), list(vals[i].shape))
                    c.graph.input.append(vi)
                    f2[nm] = vals[i]
                yield f'cut inputs of {n.op_type}', c, f2
        # 4. bypass a node: its output's uses take one of its inputs of the same type and shape
        outs = {o.name for o in g.output}
        for j, n in enumerate(nodes):
            used_outs = [o for o in n.output if o and (o in outs or any(o in node_uses(x) for x in nodes))]
            if len(used_outs) != 1 or used_outs[0] not in vals:
                continue
            o = used_outs[0]
            for i in dict.fromkeys(x for x in n.input if x):
                if i not in vals or vals[i].dtype != vals[o].dtype or vals[i].shape != vals[o].shape:
                    continue
                if o in outs and (i in inputs or i in inits or i in outs):
                    continue
                c = copy.deepcopy(m)
                del c.graph.node[j]
                rename_uses(c.graph, o, i)
                for go in c.graph.output:
                    if go.name == o:
                        go.CopyFrom(rank_only_vi(i, vals[i]))
                yield f'bypass {n.op_type}', c, feeds
        # 5. bypass a node inside an If/Loop body (types from shape inference)
        for j, n in enumerate(nodes):
            for gi, sg in enumerate(list(attr_graphs(n))):
                stypes = {}
                for v in list(sg.input) + list(sg.value_info) + list(sg.output):
                    if v.type.HasField('tensor_type'):
                        stypes[v.name] = v.type.tensor_type
                for k, sn in enumerate(sg.node):
                    if sn.op_type == 'Constant' or len([o for o in sn.output if o]) != 1:
                        continue
                    o = sn.output[0]
                    for i in dict.fromkeys(x for x in sn.input if x):
                        ti, to = stypes.get(i) or inf_tt(inf, i), stypes.get(o) or inf_tt(inf, o)
                        if ti is None or to is None or ti.elem_type != to.elem_type or \
                                (ti.HasField('shape') and to.HasField('shape') and
                                 [d.dim_value for d in ti.shape.dim] != [d.dim_value for d in to.shape.dim]):
                            continue
                        c = copy.deepcopy(m)
                        csg = list(attr_graphs(c.graph.node[j]))[gi]
                        del csg.node[k]
                        rename_uses(csg, o, i)
                        for so in csg.output:
                            if so.name == o:
                                so.name = i
                        sub_dce(csg)
                        yield f'bypass {sn.op_type} in {n.op_type} body', c, feeds
        # 6. drop a shape hint
        for k in range(len(g.value_info)):
            c = copy.deepcopy(m)
            del c.graph.value_info[k]
            yield 'drop value_info', c, feeds

    def run(self, m, feeds, sig):
        m, feeds = dce(copy.deepcopy(m), feeds)
        ev = self.ort_eval(m, feeds)
        if ev is None:
            return None
        o = self.ours(m, feeds, ev[0])
        if not same_failure(sig, o):
            return None
        sig = o
        refs, vals, inf = ev
        progress = True
        while progress and time.time() < self.deadline and self.tries_left > 0:
            progress = False
            for desc, c, f2 in self.candidates(m, feeds, vals, inf):
                if time.time() > self.deadline or self.tries_left <= 0:
                    break
                c, f2 = dce(c, f2)
                if len(c.graph.node) == 0 or not c.graph.output:
                    continue
                r = self.still(c, f2, sig)
                if r is not None:
                    (refs, vals, inf), sig = r
                    m, feeds = c, f2
                    progress = True
                    break
        return m, feeds, refs, sig


def zlib_hash(s):
    return hashlib.sha1(s.encode()).hexdigest()[:6]


def norm_msg(s):
    s = s.lower()
    s = re.sub(r"'[^']*'|\"[^\"]*\"|\[[^\]]*\]|\([^)]*\)|\{[^}]*\}", '_', s)
    s = re.sub(r'[0-9]+', '#', s)
    s = re.sub(r'\s+', ' ', s).strip()
    return s[:120]


def same_failure(a, b):
    if b is None or a.status != b.status:
        return False
    if a.status == 'error':
        return norm_msg(a.message) == norm_msg(b.message)
    if a.status == 'fail' and isinstance(a.max_rel_diff, (int, float)) and isinstance(b.max_rel_diff, (int, float)):
        # a mismatch must stay a mismatch of the same size, not shrink to rounding noise
        return b.max_rel_diff >= min(0.25 * a.max_rel_diff, 0.05)
    return True


def describe(m, outcome=None, sub=True):
    ops = []

    def walk(g):
        for n in g.node:
            if n.op_type not in ops and n.op_type not in ('Constant', 'Identity'):
                ops.append(n.op_type)
            if sub:
                for sg in attr_graphs(n):
                    walk(sg)
    walk(m.graph)
    return ops


def save_regression(regdir, m, feeds, refs, tol, source, outcome, key):
    os.makedirs(regdir, exist_ok=True)
    ops = describe(m, outcome, sub=False)
    h = hashlib.sha1(m.SerializeToString()).hexdigest()[:6]
    kind = {'fail': 'mismatch'}.get(outcome.status, outcome.status)
    name = f"{'-'.join(o.lower() for o in ops[:3]) or 'graph'}-{kind}-{h}"
    idx = os.path.join(regdir, 'index.json')
    entries = []
    if os.path.exists(idx):
        with open(idx) as f:
            entries = json.load(f).get('models', [])
    for e in entries:
        meta = os.path.join(regdir, e['name'], 'difftest.json')
        if os.path.exists(meta):
            with open(meta) as f:
                if json.load(f).get('key') == key:
                    return e['name'], False
    d = os.path.join(regdir, name)
    if os.path.exists(d):
        shutil.rmtree(d)
    os.makedirs(d)
    # the folder's own index.json (paths relative to the folder) ...
    own = write_entry(d, 'x', m, [(feeds, refs)], tol, source)
    shutil.move(os.path.join(d, 'x', 'model.onnx'), os.path.join(d, 'model.onnx'))
    shutil.move(os.path.join(d, 'x', 'c0'), os.path.join(d, 'c0'))
    os.rmdir(os.path.join(d, 'x'))
    own['name'] = name
    own['model'] = 'model.onnx'
    for c in own['cases']:
        for s_ in c['steps']:
            for k in ('inputs', 'outputs'):
                s_[k] = {n: p[2:] for n, p in s_[k].items()}
    write_index(os.path.join(d, 'index.json'), [own])
    # ... and its entry in the regressions' index.json (paths relative to that folder)
    top = json.loads(json.dumps(own))
    top['model'] = f'{name}/model.onnx'
    for c in top['cases']:
        for s_ in c['steps']:
            for k in ('inputs', 'outputs'):
                s_[k] = {n: f'{name}/{p}' for n, p in s_[k].items()}
    with open(os.path.join(d, 'difftest.json'), 'w') as f:
        json.dump({'key': key, 'ops': describe(m, outcome), 'status': outcome.status,
                   'message': outcome.message[:500], 'max_rel_diff': outcome.max_rel_diff, 'source': source}, f,
                  indent=1)
    entries = [e for e in entries if e['name'] != name] + [top]
    entries.sort(key=lambda e: e['name'])
    write_index(idx, entries)
    return name, True


def failure_key(m, outcome):
    ops = sorted(set(describe(m, outcome)))
    msg = norm_msg(outcome.message) if outcome.status == 'error' else ''
    return f"{outcome.status}|{','.join(ops)}|{msg}"


def model_summary(m, feeds):
    lines = []
    g = m.graph
    for i in g.input:
        t = i.type.tensor_type
        dims = [d.dim_param or (str(d.dim_value) if d.HasField('dim_value') else '?') for d in t.shape.dim]
        lines.append(f'    input {i.name}: {TensorProto.DataType.Name(t.elem_type).lower()}[{",".join(dims)}]'
                     + (f' data{list(feeds[i.name].shape)}' if i.name in feeds else ''))

    def fmt_node(n, indent):
        attrs = []
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                attrs.append(f'{a.name}=<graph>')
            else:
                v = helper.get_attribute_value(a)
                if isinstance(v, bytes):
                    v = v.decode(errors='replace')
                if isinstance(v, onnx.TensorProto):
                    v = numpy_helper.to_array(v).tolist()
                attrs.append(f'{a.name}={v}')
        ins = []
        for i in n.input:
            init = next((x for x in g.initializer if x.name == i), None)
            if init is not None and np.prod(init.dims) <= 8:
                ins.append(f'{i}={numpy_helper.to_array(init).tolist()}')
            else:
                ins.append(i)
        lines.append(f'{indent}{n.op_type}({", ".join(ins)}) -> {", ".join(n.output)} {" ".join(attrs)}')
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                lines.append(f'{indent}  {a.name}({", ".join(x.name for x in a.g.input)}):')
                for sn in a.g.node:
                    fmt_node(sn, indent + '    ')
                lines.append(f'{indent}    return {", ".join(x.name for x in a.g.output)}')
    for n in g.node:
        fmt_node(n, '    ')
    for v in g.value_info:
        t = v.type.tensor_type
        dims = [d.dim_param or (str(d.dim_value) if d.HasField('dim_value') else '?') for d in t.shape.dim]
        lines.append(f'    value_info {v.name}: {TensorProto.DataType.Name(t.elem_type).lower()}[{",".join(dims)}]')
    lines.append(f'    outputs: {", ".join(o.name for o in g.output)}; opset '
                 f'{[o.version for o in m.opset_import if o.domain in ("", "ai.onnx")]}')
    return '\n'.join(lines)


# --------------------------------------------------------------------------------------------

def gen_task(seed, index, verbose, opts=None):
    stats = Stats()
    try:
        r = build_graph(seed, index, stats, verbose, opts)
    except Skip:
        r = None
        stats.c['empty'] += 1
    except Exception as e:       # a generator bug: count it, keep going
        r = None
        stats.c['generator-error'] += 1
        import traceback
        tb = traceback.format_exc().strip().splitlines()
        stats.msgs[f'generator error: {tb[-1][:100]} at {tb[-3].strip()[:80]}'] += 1
        if verbose:
            print(f'  [generator-error] index={index}: {e!r}\n' + '\n'.join(tb[-6:]))
    if r is not None:
        model, cases, tol, feats = r
        r = (model.SerializeToString(), cases, tol, feats)
    return index, r, stats


def min_task(runner, out, name, entry, outcome, tol, budget, workdir):
    m = onnx.load(os.path.join(out, entry['model']))
    case = next((c for c in entry['cases'] if c['name'] == outcome.case), entry['cases'][0])
    feeds = {k: np.load(os.path.join(out, p)) for k, p in case['steps'][0]['inputs'].items()}
    r = Minimizer(runner, workdir, tol, budget).run(m, feeds, outcome)
    if r is None:
        # the failing case alone does not reproduce it: keep the whole graph
        refs = {k: np.load(os.path.join(out, p)) for k, p in case['steps'][0]['outputs'].items()}
        return m.SerializeToString(), feeds, refs, outcome, len(m.graph.node)
    mm, mf, mr, mo = r
    return mm.SerializeToString(), mf, mr, mo, len(m.graph.node)


class Pool:
    """Worker processes, so that an abort inside onnx or ONNX Runtime costs one graph, not the run."""

    def __init__(self, jobs):
        import multiprocessing
        self.jobs, self.ctx, self.ex = jobs, multiprocessing.get_context('spawn'), None

    def _ex(self, n):
        from concurrent.futures import ProcessPoolExecutor
        return ProcessPoolExecutor(n, mp_context=self.ctx)

    def map(self, fn, arglist, on_crash):
        from concurrent.futures.process import BrokenProcessPool
        if self.ex is None:
            self.ex = self._ex(self.jobs)
        futs = [self.ex.submit(fn, *a) for a in arglist]
        out = [None] * len(arglist)
        try:
            for k, f in enumerate(futs):
                out[k] = f.result()
        except BrokenProcessPool:
            self.ex.shutdown(wait=False, cancel_futures=True)
            self.ex = None
            for k, a in enumerate(arglist):
                if out[k] is None:
                    with self._ex(1) as ex1:
                        try:
                            out[k] = ex1.submit(fn, *a).result()
                        except BrokenProcessPool:
                            out[k] = on_crash(*a)
        return out

    def close(self):
        if self.ex is not None:
            self.ex.shutdown(wait=True, cancel_futures=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--count', type=int, default=200, help='graphs to compare')
    ap.add_argument('--out', required=True, help='corpus folder (OUTDIR/index.json)')
    ap.add_argument('--runner', default=os.environ.get('OPTIMIUM_CORPUS_RUNNER', DEFAULT_RUNNER))
    ap.add_argument('--save-regressions', action='store_true',
                    help='save each distinct minimized failure under --regressions')
    ap.add_argument('--regressions', default=DEFAULT_REGRESSIONS)
    ap.add_argument('--keep', action='store_true', help='keep the passing graphs in OUTDIR')
    ap.add_argument('--batch', type=int, default=200, help='graphs per runner invocation')
    ap.add_argument('--jobs', type=int, default=min(2, os.cpu_count() or 1), help='generator processes')
    ap.add_argument('--no-minimize', action='store_true')
    ap.add_argument('--min-budget', type=float, default=120, help='seconds to minimize one failure')
    ap.add_argument('--generate-only', action='store_true', help='write the corpus, do not run our runtime')
    ap.add_argument('--index', type=int, help='only this graph index (debugging)')
    ap.add_argument('--start', type=int, default=0, help='first graph index')
    ap.add_argument('--time-limit', type=float, default=0, help='stop generating after this many seconds')
    ap.add_argument('--wrong-value-info', type=float, default=0.12, metavar='P',
                    help='share of graphs with a deliberately wrong value_info shape for an intermediate')
    ap.add_argument('--verbose', '-v', action='store_true')
    args = ap.parse_args()

    ort.set_default_logger_severity(3)
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    for x in os.listdir(out):
        if re.fullmatch(r'g\d{5,}|minimized', x):
            shutil.rmtree(os.path.join(out, x), ignore_errors=True)
        elif x in ('index.json', '.batch.json', '.one.json', '.batch.json.report.json', '.one.json.report.json',
                   'failures.txt'):
            os.remove(os.path.join(out, x))
    if not args.generate_only and not os.access(args.runner, os.X_OK):
        print(f'error: runner {args.runner} not found (build optimium_corpus_runner or pass --runner)')
        return 2

    t0 = time.time()
    stats = Stats()
    entries, meta, results, failures = [], {}, {}, []
    index = args.index if args.index is not None else args.start
    attempts = 0
    run_time = 0.0
    pool = Pool(args.jobs)
    # Without --keep the graphs are staged on tmpfs (unlinking thousands of small files on the
    # checkout's disk costs more than generating them); failing graphs are copied to OUTDIR.
    stage = None
    if not args.keep and not args.generate_only:
        base = '/dev/shm' if os.path.isdir('/dev/shm') and os.access('/dev/shm', os.W_OK) else out
        stage = tempfile.mkdtemp(prefix='difftest-', dir=base)
        atexit.register(shutil.rmtree, stage, True)
    wdir = stage or out

    def crashed(seed, i, verbose, opts):
        st = Stats()
        st.c['tool-crash'] += 1
        if verbose:
            print(f'  [tool-crash] index={i}: onnx or ONNX Runtime aborted')
        return i, None, st

    while len(entries) < args.count and attempts < args.count * 5:
        if args.time_limit and time.time() - t0 > args.time_limit:
            break
        n = 1 if args.index is not None else min(args.batch, args.count - len(entries))
        todo = list(range(index, index + n))
        index += n
        attempts += n
        batch = []
        opts = {'wrong_vi': args.wrong_value_info}
        for i, r, st in pool.map(gen_task, [(args.seed, i, args.verbose, opts) for i in todo], crashed):
            stats.c.update(st.c)
            stats.ort_msgs.update(st.ort_msgs)
            stats.msgs.update(st.msgs)
            if r is None:
                continue
            mb, cases, tol, feats = r
            name = f'g{i:05d}'
            src = f'difftest seed={args.seed} index={i}'
            e = write_entry(wdir, name, onnx.load_from_string(mb), cases, tol, src)
            entries.append(e)
            batch.append(e)
            meta[name] = {'source': src, 'features': feats, 'tol': tol}
        if batch and not args.generate_only:
            t = time.time()
            res = run_models(args.runner, wdir, batch)
            run_time += time.time() - t
            for e in batch:
                o = results[e['name']] = res[e['name']]
                if o.status != 'pass':
                    if stage:
                        shutil.copytree(os.path.join(stage, e['name']), os.path.join(out, e['name']))
                    failures.append(e['name'])
                    mt = meta[e['name']]
                    print(f'FAIL {e["name"]} ({mt["source"]}; {",".join(sorted(mt["features"]))}) case {o.case}: {o}',
                          flush=True)
            if stage:
                for e in batch:
                    shutil.rmtree(os.path.join(stage, e['name']), ignore_errors=True)
        if args.index is not None:
            break
    gen_time = time.time() - t0 - run_time

    # minimize the failures
    seen = {}
    if failures and not args.no_minimize:
        mdir = os.path.join(out, 'minimized')
        os.makedirs(mdir, exist_ok=True)
        report = []
        for name in failures:
            o = results[name]
            e = next(x for x in entries if x['name'] == name)
            tol = meta[name]['tol']
            t = time.time()

            def min_crashed(*a):
                return None
            r = pool.map(min_task, [(args.runner, out, name, e, o, tol, args.min_budget, wdir)], min_crashed)[0]
            if r is None:
                print(f'minimizing {name} crashed (onnx or ONNX Runtime aborted); kept whole')
                continue
            mb, mf, mr, mo, n0 = r
            mm = onnx.load_from_string(mb)
            key = failure_key(mm, mo)
            dup = key in seen
            seen.setdefault(key, name)
            print(f'minimized {name}: {n0} -> {len(mm.graph.node)} nodes in {time.time() - t:.0f}s'
                  f'{" (same failure as " + seen[key] + ")" if dup else ""}: {mo}', flush=True)
            write_index(os.path.join(mdir, f'{name}.json'),
                        [write_entry(mdir, name, mm, [(mf, mr)], tol, meta[name]['source'] + ' minimized')])
            summ = model_summary(mm, mf)
            report.append(f'{name} ({meta[name]["source"]}): {mo}\n{summ}\n')
            if args.verbose or not dup:
                print(summ)
            if args.save_regressions and not dup:
                rn, new = save_regression(args.regressions, mm, mf, mr, tol,
                                          meta[name]['source'] + ' (minimized)', mo, key)
                print(f'  regression {"saved" if new else "already present"}: {os.path.join(args.regressions, rn)}')
        with open(os.path.join(out, 'failures.txt'), 'w') as f:
            f.write('\n'.join(report))
    pool.close()

    # index.json: every compared graph with --keep, else only the failing ones
    kept = entries if args.keep or args.generate_only else [e for e in entries if e['name'] in failures]
    write_index(os.path.join(out, 'index.json'), kept)
    for x in ('.batch.json', '.one.json', '.batch.json.report.json', '.one.json.report.json'):
        if os.path.exists(os.path.join(out, x)):
            os.remove(os.path.join(out, x))

    disc = stats.c['ort-invalid']
    other = {k: v for k, v in stats.c.items() if k != 'ort-invalid'}
    print(f'generator: {attempts} attempts in {gen_time:.0f}s, ours {run_time:.0f}s, total {time.time() - t0:.0f}s'
          + (f'; also discarded: {dict(other)}' if other else ''))
    if args.verbose:
        for msg, k in stats.ort_msgs.most_common(15):
            print(f'  ort-invalid x{k}: {msg}')
        for msg, k in stats.msgs.most_common(15):
            print(f'  other x{k}: {msg}')
    if args.generate_only:
        print(f'generated {len(entries)} graphs ({disc} discarded as ORT-invalid) in {out}')
        return 0
    npass = sum(1 for o in results.values() if o.status == 'pass')
    print(f'compared {len(entries)} graphs ({disc} discarded as ORT-invalid): {npass} passed, {len(failures)} failed')
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())

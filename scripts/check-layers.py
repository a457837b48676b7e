#!/usr/bin/env python3
"""Fails when a source file includes a header from a layer above its own.

The layer order (docs/architecture.md):

    core < ir < {import, passes, plan} < backends < exec < api < remote < {tools, python}

A file may include its own layer and any layer below it. The three middle layers (import, passes,
plan) are peers of one rank, but none of them includes another: each reads the graph (ir) only.
More rules:
  * backends see core and ir only: what a pass and a kernel share (fused op names, attribute
    keys, weight layouts) lives in ir/, and a kernel reaches the profiler through its context.
  * exec reaches backends only through the registry (backends/BackendRegistry.h,
    backends/NodeHandle.h) and the C ABI (include/Optimium/Runtime/Extension/), never a particular
    backend's internals such as backends/native/.
  * a backend reaches nothing of another backend.
The public headers (include/Optimium/) sit below everything: their types are implemented in core.
Includes are resolved as the compiler does: next to the including file, then src/, then include/.

Usage: check-layers.py [ROOT]   (prints each back edge, exits 1 when there is one)
"""
import os
import re
import sys

RANK = {"core": 0, "ir": 1, "import": 2, "passes": 2, "plan": 2, "backends": 3, "exec": 4,
        "api": 5, "remote": 6, "tools": 7, "python": 7}
# What a backend's kernels may see: the tensors and the graph, nothing a pass, the importer or the
# executor owns. Contracts a pass and a kernel share (fused op names, attribute keys) live in ir/.
BACKEND_DEPS = {"core", "ir", "backends"}
REGISTRY = {"backends/BackendRegistry.h", "backends/NodeHandle.h"}
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


def layer_of(rel):
    """rel: a path relative to the repository root. Returns (layer, path inside src/) or None."""
    parts = rel.split("/")
    if parts[0] == "include":
        return ("public", rel)
    if parts[0] == "python":
        return ("python", rel)
    if parts[0] == "src" and len(parts) > 2 and parts[1] in RANK:
        return (parts[1], "/".join(parts[1:]))
    return None


def resolve(root, including, target):
    for base in (os.path.dirname(including), "src", "include"):
        cand = os.path.normpath(os.path.join(base, target))
        if os.path.isfile(os.path.join(root, cand)):
            return cand
    return None


def backend_of(src_path):
    parts = src_path.split("/")
    return parts[1] if parts[0] == "backends" and len(parts) > 2 else None


def check(root):
    errors = []
    for top in ("src", "python/src"):
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                if not name.endswith((".h", ".hpp", ".cpp", ".cc", ".c", ".inc")):
                    continue
                rel = os.path.relpath(os.path.join(dirpath, name), root)
                me = layer_of(rel)
                if me is None:
                    continue
                with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
                    text = f.read()
                for m in INCLUDE_RE.finditer(text):
                    line = text.count("\n", 0, m.start()) + 1
                    dep_rel = resolve(root, rel, m.group(1))
                    if dep_rel is None:
                        continue  # a generated or third-party header
                    dep = layer_of(dep_rel)
                    if dep is None or dep[0] == "public":
                        continue
                    why = None
                    if RANK[dep[0]] > RANK[me[0]]:
                        why = f"{dep[0]} is above {me[0]}"
                    elif RANK[dep[0]] == RANK[me[0]] and dep[0] != me[0] and me[0] != "python":
                        why = f"{me[0]} and {dep[0]} are peers; neither includes the other"
                    elif me[0] == "backends" and dep[0] not in BACKEND_DEPS:
                        why = f"backends see core and ir only, not {dep[0]}"
                    elif RANK[me[0]] > RANK["backends"] and dep[0] == "backends" and dep[1] not in REGISTRY:
                        why = f"{me[0]} reaches backends only through the registry and the C ABI"
                    elif me[0] == "exec" and dep[0] == "backends" and dep[1] not in REGISTRY:
                        why = "exec reaches backends only through the registry and the C ABI"
                    elif me[0] == "backends" and dep[0] == "backends":
                        a, b = backend_of(me[1]), backend_of(dep[1])
                        if a and b and a != b:
                            why = f"backend {a} includes backend {b}'s internals"
                    if why:
                        errors.append(f"{rel}:{line}: includes \"{m.group(1)}\": {why}")
    return errors


def self_test():
    """The checker catches each kind of back edge and passes a clean tree."""
    import tempfile
    cases = {
        "src/ir/A.h": ('#include "exec/Request.h"', "exec is above ir"),
        "src/backends/native/ops/B.cpp": ('#include "passes/FuseX.h"', "backends see core and ir only"),
        "src/exec/C.cpp": ('#include "backends/native/Kernel.h"', "through the registry"),
        "src/passes/D.cpp": ('#include "import/M.h"', "are peers"),
        "src/backends/xnn/E.cpp": ('#include "../native/Kernel.h"', "includes backend native"),
        "src/api/F.cpp": ('#include "remote/protocol/Frame.h"', "remote is above api"),
    }
    with tempfile.TemporaryDirectory() as root:
        for rel in ["src/exec/Request.h", "src/passes/FuseX.h", "src/backends/native/Kernel.h",
                    "src/import/M.h", "src/backends/BackendRegistry.h", "src/core/S.h",
                    "src/remote/protocol/Frame.h"]:
            os.makedirs(os.path.join(root, os.path.dirname(rel)), exist_ok=True)
            open(os.path.join(root, rel), "w").close()
        ok = {"src/exec/Ok.cpp": '#include "backends/BackendRegistry.h"\n#include "core/S.h"',
              "src/tools/Ok.cpp": '#include "remote/protocol/Frame.h"'}
        for rel, text in list(ok.items()) + [(k, v[0]) for k, v in cases.items()]:
            os.makedirs(os.path.join(root, os.path.dirname(rel)), exist_ok=True)
            with open(os.path.join(root, rel), "w") as f:
                f.write(text + "\n")
        errors = check(root)
        for rel, (_, why) in cases.items():
            hits = [e for e in errors if e.startswith(rel + ":")]
            assert len(hits) == 1 and why in hits[0], (rel, hits)
        assert not [e for e in errors if e.endswith("Ok.cpp") or "/Ok.cpp:" in e], errors
        assert len(errors) == len(cases), errors
    print("check-layers self-test: ok")


def main():
    if sys.argv[1:] == ["--self-test"]:
        self_test()
        return 0
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    errors = check(os.path.abspath(root))
    for e in errors:
        print(e)
    if errors:
        print(f"{len(errors)} include(s) break the layer order (see scripts/check-layers.py)")
        return 1
    print("layer order: no back edges")
    return 0


if __name__ == "__main__":
    sys.exit(main())

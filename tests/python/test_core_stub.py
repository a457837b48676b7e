"""python/optimium/runtime/_core.pyi is nanobind stubgen's output for the installed extension
(scripts/gen-stubs.sh): regenerate it and compare, so the stub cannot drift from the bindings."""
import difflib
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
STUB = ROOT / "python" / "optimium" / "runtime" / "_core.pyi"
# The stubgen that wrote the committed stub; another version formats differently.
NANOBIND_VERSION = "3.1.0"


def test_committed_stub_is_stubgen_output(tmp_path):
    nanobind = pytest.importorskip("nanobind")
    if nanobind.__version__ != NANOBIND_VERSION:
        pytest.skip(f"the stub was generated with nanobind {NANOBIND_VERSION}, this is {nanobind.__version__}")
    out = tmp_path / "_core.pyi"
    env = dict(os.environ, PYTHON=sys.executable)
    subprocess.run(["bash", str(ROOT / "scripts" / "gen-stubs.sh"), str(out)], check=True, env=env,
                   stdout=subprocess.DEVNULL)
    generated, committed = out.read_text(), STUB.read_text()
    if generated != committed:
        diff = "".join(difflib.unified_diff(committed.splitlines(True), generated.splitlines(True),
                                            "committed _core.pyi", "stubgen", n=1))
        pytest.fail("python/optimium/runtime/_core.pyi is not what the bindings generate; run "
                    "scripts/gen-stubs.sh after installing the extension (pip install .):\n" + diff[:6000])

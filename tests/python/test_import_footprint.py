"""Importing optimium.runtime builds no operator: op schemas and kernels are registered as
factories and built on first use, so the extension's code is not paged in at import (before, the
static registrations touched every op's code: ~9.7 MiB of the module resident after import)."""
import os
import subprocess
import sys

import pytest

CHECK = r"""
import optimium.runtime as rt
total = 0
cur = None
with open('/proc/self/smaps') as f:
    for line in f:
        parts = line.split()
        if len(parts) >= 5 and '-' in parts[0]:
            cur = parts[5] if len(parts) > 5 else ''
        elif parts[0] == 'Rss:' and cur and '_core' in cur and 'optimium' in cur:
            total += int(parts[1])
print(total)
"""


@pytest.mark.skipif(os.environ.get("OPTIMIUM_ASAN") == "1",
                    reason="an AddressSanitizer build maps and touches its module differently (shadow memory)")
def test_import_leaves_most_of_the_extension_paged_out():
    # A fresh interpreter: this test process may have built every op already.
    out = subprocess.run([sys.executable, "-c", CHECK], check=True, capture_output=True, text=True).stdout
    resident_kib = int(out.strip().splitlines()[-1])
    assert 0 < resident_kib < 6 * 1024, f"{resident_kib} KiB of the extension module resident right after import"


def test_ops_build_on_first_use():
    # The bundled model loads and runs in a fresh interpreter: its ops are built when it loads.
    from conftest import DIGITS

    script = f"""
import numpy as np, optimium.runtime as rt
m = rt.load_model({str(DIGITS / "model.onnx")!r})
r = m.create_request()
r.infer([np.load({str(DIGITS / "sample_input.npy")!r})]); r.wait()
got = r.get_output(m.output_names[0]).to_numpy()
want = np.load({str(DIGITS / "sample_output.npy")!r})
print(float(np.abs(got - want).max()))
"""
    out = subprocess.run([sys.executable, "-c", script], check=True, capture_output=True, text=True).stdout
    assert float(out.strip().splitlines()[-1]) < 1e-4

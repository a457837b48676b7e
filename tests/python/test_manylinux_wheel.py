"""The manylinux wheel (scripts/build-wheel.sh; scripts/test.sh installs it into .venv-py and sets
OPTIMIUM_WHEEL to its path): the installed extension loads no shared library outside the manylinux
policy except its bundled copies (with OPTIMIUM_WHEEL set, an installed package without them fails
instead of skipping), auditwheel tags the wheel manylinux, and the wheel installs into a fresh venv
and runs the bundled model while the system's copies of the bundled libraries are hidden, whatever
LD_LIBRARY_PATH says: bind-mounted over with /dev/null in a private mount namespace (loading them
fails with 'file too short'), or, where no namespace can be made (a container without
CAP_SYS_ADMIN), refused to the dynamic loader by an LD_AUDIT module (la_objsearch), with a warning.
OPTIMIUM_WHEEL_HIDE=audit forces the second way."""
import glob
import importlib.util
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import warnings
import zipfile

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
DIGITS = ROOT / "models" / "digits"
WHEEL = os.environ.get("OPTIMIUM_WHEEL")

pytestmark = pytest.mark.skipif(os.environ.get("OPTIMIUM_ASAN") == "1",
                                reason="the sanitizer run imports its own build of the extension, not the wheel")

# auditwheel's manylinux policy: the system libraries a manylinux wheel may load (the rest it bundles),
# plus the loader and the vDSO.
MANYLINUX_SYSTEM_LIBS = {
    "libatomic.so.1", "libgcc_s.so.1", "libstdc++.so.6", "libm.so.6", "libmvec.so.1", "libanl.so.1",
    "libdl.so.2", "librt.so.1", "libc.so.6", "libnsl.so.1", "libutil.so.1", "libpthread.so.0",
    "libX11.so.6", "libXext.so.6", "libXrender.so.1", "libICE.so.6", "libSM.so.6", "libGL.so.1",
    "libgobject-2.0.so.0", "libgthread-2.0.so.0", "libglib-2.0.so.0", "libresolv.so.2",
    "libexpat.so.1", "libz.so.1", "ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1", "linux-vdso.so.1",
}
# Hidden even if a future build stopped bundling them: the Debian packages issue 22 names.
ALWAYS_HIDDEN = ["libprotobuf*.so*", "libprotoc*.so*", "libonnx*.so*"]


def _not_there(reason):
    """Without OPTIMIUM_WHEEL (a plain pip install .) these checks do not apply; with it they must run."""
    if WHEEL:
        pytest.fail(reason)
    pytest.skip(reason)


def _ldd(path):
    """ldd's answer as (name, resolved path or None) pairs."""
    out = subprocess.run(["ldd", str(path)], check=True, capture_output=True, text=True).stdout
    deps = []
    for line in out.splitlines():
        line = line.strip()
        if "=>" in line:
            name, target = (s.strip() for s in line.split("=>", 1))
            resolved = None if target.startswith("not found") else target.split(" (")[0].strip() or None
            deps.append((name, resolved))
        elif line:
            path_part = line.split(" (")[0]
            deps.append((os.path.basename(path_part), path_part if "/" in path_part else None))
    return deps


def test_installed_extension_loads_only_manylinux_system_libraries():
    import optimium.runtime._core as core

    core_path = pathlib.Path(core.__file__)
    libs = core_path.parents[2] / "optimium_runtime.libs"
    if not libs.is_dir():
        _not_there(f"{core_path} is not from a repaired wheel (no {libs.name}/ beside it: pip install .?)")
    outside = []
    for name, resolved in _ldd(core_path):
        assert resolved is not None or name == "linux-vdso.so.1", f"{name} not found for {core_path}"
        if resolved and pathlib.Path(resolved).resolve().parent == libs.resolve():
            continue
        if name not in MANYLINUX_SYSTEM_LIBS:
            outside.append(f"{name} => {resolved}")
    assert not outside, "the extension loads system libraries outside the manylinux policy:\n" + "\n".join(outside)
    bundled = sorted(p.name for p in libs.iterdir())
    assert any(n.startswith("libprotobuf-") for n in bundled), bundled
    assert any(n.startswith("libonnx_proto-") for n in bundled), bundled


def _wheel():
    if not WHEEL:
        pytest.skip("OPTIMIUM_WHEEL is not set (scripts/test.sh sets it to the wheel scripts/build-wheel.sh made)")
    assert os.path.isfile(WHEEL), WHEEL
    return pathlib.Path(WHEEL)


def test_auditwheel_tags_the_wheel_manylinux():
    wheel = _wheel()
    assert re.search(r"-manylinux_\d+_\d+_\w+\.whl$", wheel.name), wheel.name
    if importlib.util.find_spec("auditwheel") is None:
        pytest.fail("auditwheel is not installed in this venv (scripts/test.sh installs it)")
    show = subprocess.run([sys.executable, "-m", "auditwheel", "show", str(wheel)],
                          check=True, capture_output=True, text=True).stdout
    flat = " ".join(show.split())  # auditwheel wraps its lines
    tag = re.search(r'consistent with the following platform tag: "(manylinux_\d+_\d+_\w+)"', flat)
    assert tag, show
    assert tag.group(1) in wheel.name, (tag.group(1), wheel.name)


def _system_library_dirs():
    dirs = {"/lib", "/lib64", "/usr/lib", "/usr/lib64", "/usr/local/lib"}
    dirs |= set(glob.glob("/usr/lib/*-linux-gnu")) | set(glob.glob("/lib/*-linux-gnu"))
    out = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True).stdout
    dirs |= {os.path.dirname(line.split("=>", 1)[1].strip()) for line in out.splitlines() if "=>" in line}
    return sorted({os.path.realpath(d) for d in dirs if os.path.isdir(d)})


def _libraries_to_hide(wheel):
    """The system files of every library the wheel bundles (auditwheel names its copies
    optimium_runtime.libs/<name>-<hash>.so.<version>), plus protobuf and onnx by name."""
    with zipfile.ZipFile(wheel) as z:
        bundled = [os.path.basename(n) for n in z.namelist() if n.startswith("optimium_runtime.libs/") and ".so" in n]
    patterns = list(ALWAYS_HIDDEN)
    for name in bundled:
        m = re.match(r"(.+?)-[0-9a-f]{8}(\.so.*)$", name)
        assert m, f"unexpected bundled library name {name}"
        patterns.append(m.group(1) + ".so*")
    files = set()
    for d in _system_library_dirs():
        for pattern in patterns:
            files |= {os.path.realpath(f) for f in glob.glob(os.path.join(d, pattern))}
    sonames = sorted({re.sub(r"-[0-9a-f]{8}(\.so\.\d+).*$", r"\1", n) for n in bundled})
    return sorted(f for f in files if os.path.isfile(f)), bundled, sonames


# Runs in the mount namespace (or under LD_AUDIT): hides the files, makes a fresh venv, pip-installs
# the wheel offline, links numpy in (a .pth) and runs the check.
HIDE_AND_INSTALL = r"""
set -euo pipefail
hide_by=$1 base_python=$2 venv=$3 wheel=$4 numpy_dir=$5 check=$6; shift 6
if [ "$hide_by" = mount ]; then
  mount --make-rprivate /        # unshare's default too: nothing done here reaches the host
  for f in "$@"; do mount --bind /dev/null "$f"; done
fi
"$base_python" -m venv "$venv"
"$venv/bin/python" -m pip install -q --disable-pip-version-check --no-index --no-deps "$wheel"
site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
echo "$numpy_dir" > "$site/numpy-only.pth"
"$venv/bin/python" -I "$check"
"""

# The fallback: the loader asks this module about every path it tries (la_objsearch, rtld-audit(7));
# it refuses those that resolve to a hidden file, so a search for them ends in 'No such file'.
AUDIT_MODULE = r"""
#define _GNU_SOURCE
#include <link.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
unsigned int la_version(unsigned int version) { return version; }
char *la_objsearch(const char *name, uintptr_t *cookie, unsigned int flag) {
  (void)cookie;
  const char *hidden = getenv("OPTIMIUM_HIDDEN_FILES");
  char real[PATH_MAX];
  if (flag == LA_SER_ORIG || !hidden || !realpath(name, real)) return (char *)name;
  size_t n = strlen(real);
  for (const char *p = hidden; *p;) {
    const char *end = strchr(p, ':');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    if (len == n && memcmp(p, real, n) == 0) return NULL;
    if (!end) break;
    p = end + 1;
  }
  return (char *)name;
}
"""

# The fresh venv's check: the system copies are unreachable, the package is the venv's, the model runs.
CHECK = r"""
import ctypes, json, os, sys
sonames, bundled, digits = json.loads(os.environ["OPTIMIUM_WHEEL_CHECK"])
hidden = {}
for name in sonames:
    try:
        ctypes.CDLL(name)
        hidden[name] = "LOADED"
    except OSError as e:
        hidden[name] = str(e)
import numpy as np
import optimium.runtime as rt
model = rt.load_model(os.path.join(digits, "model.onnx"), threads=1)
request = model.create_request()
request.infer([np.load(os.path.join(digits, "sample_input.npy"))])
request.wait()
got = request.get_output("probabilities").to_numpy()
want = np.load(os.path.join(digits, "sample_output.npy"))
with open("/proc/self/maps") as f:
    mapped = sorted({line.split()[-1] for line in f if ".so" in line and "/" in line})
print(json.dumps({"hidden": hidden, "package": rt.__file__, "max_err": float(np.abs(got - want).max()),
                  "argmax": int(got.argmax()), "mapped": mapped}))
"""


def _namespace_command():
    """unshare with a private mount namespace (as root), or inside a user namespace (as a user)."""
    unshare = shutil.which("unshare")
    if unshare is None:
        return None, "util-linux unshare is not installed"
    cmd = [unshare, "--mount", "--propagation", "private"]
    if os.geteuid() != 0:
        cmd.insert(1, "--map-root-user")
    probe = subprocess.run(cmd + ["mount", "--bind", "/dev/null", "/dev/null"], capture_output=True, text=True)
    if probe.returncode != 0:
        return None, f"no private mount namespace ({' '.join(cmd)}: {probe.stderr.strip()})"
    return cmd, None


def _audit_module(tmp_path):
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        return None
    source = tmp_path / "hide.c"
    source.write_text(AUDIT_MODULE)
    module = tmp_path / "hide.so"
    subprocess.run([compiler, "-shared", "-fPIC", "-O2", "-o", str(module), str(source)], check=True)
    return module


def test_wheel_installs_and_runs_in_a_fresh_venv_with_the_system_libraries_hidden(tmp_path):
    wheel = _wheel()
    hide, bundled, sonames = _libraries_to_hide(wheel)
    names = {os.path.basename(f) for f in hide}
    assert any(n.startswith("libprotobuf.so") for n in names), f"Debian's libprotobuf not found to hide: {hide}"
    assert any(n.startswith("libonnx_proto.so") for n in names), f"Debian's libonnx_proto not found to hide: {hide}"
    # numpy only (not the package under test) comes from this interpreter's site-packages, so the
    # fresh venv needs no index: a .pth naming a folder of links to numpy and its bundled libraries.
    import numpy

    host_site = pathlib.Path(numpy.__file__).resolve().parents[1]
    numpy_dir = tmp_path / "numpy-only"
    numpy_dir.mkdir()
    for entry in ("numpy", "numpy.libs"):
        if (host_site / entry).exists():
            (numpy_dir / entry).symlink_to(host_site / entry)
    venv = tmp_path / "venv"
    env = {k: v for k, v in os.environ.items()
           if k not in ("LD_PRELOAD", "PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PIP_REQUIRE_VIRTUALENV")}
    # LD_LIBRARY_PATH names the system folders first: the hidden files must not load from there either.
    env["LD_LIBRARY_PATH"] = ":".join(_system_library_dirs())
    env["OPTIMIUM_WHEEL_CHECK"] = json.dumps([sonames, bundled, str(DIGITS)])
    cmd, why = (None, "OPTIMIUM_WHEEL_HIDE=audit") if os.environ.get("OPTIMIUM_WHEEL_HIDE") == "audit" \
        else _namespace_command()
    hide_by = "mount"
    if cmd is None:
        module = _audit_module(tmp_path)
        if module is None:
            pytest.skip(f"{why}, and no C compiler for the LD_AUDIT module")  # the ldd check above still ran
        warnings.warn(f"{why}: the system libraries are hidden from the dynamic loader by LD_AUDIT instead")
        cmd, hide_by = [], "audit"
        env["LD_AUDIT"] = str(module)
        env["OPTIMIUM_HIDDEN_FILES"] = ":".join(hide)
    check = tmp_path / "check.py"
    check.write_text(CHECK)
    base_python = getattr(sys, "_base_executable", sys.executable)
    out = subprocess.run(cmd + ["bash", "-c", HIDE_AND_INSTALL, "bash", hide_by, base_python, str(venv), str(wheel),
                                str(numpy_dir), str(check)] + hide,
                         capture_output=True, text=True, env=env, cwd=tmp_path, timeout=900)
    assert out.returncode == 0, f"hidden by {hide_by}: {hide}\nstdout:\n{out.stdout}\nstderr:\n{out.stderr}"
    result = json.loads(out.stdout.strip().splitlines()[-1])
    # The hiding works: each bundled library's system copy fails to load in there.
    for name, error in result["hidden"].items():
        assert error != "LOADED", f"the system's {name} is still loadable with it hidden"
    assert result["package"].startswith(str(venv)), result["package"]
    assert result["argmax"] == 7 and result["max_err"] < 1e-4, result
    # The bundled copies are the ones mapped, from the fresh venv.
    mapped_libs = [p for p in result["mapped"] if "/optimium_runtime.libs/" in p]
    assert {os.path.basename(p) for p in mapped_libs} >= set(bundled), result["mapped"]
    assert all(p.startswith(str(venv)) for p in mapped_libs), mapped_libs

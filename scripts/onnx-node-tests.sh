#!/usr/bin/env bash
# Finds the ONNX backend node tests (shipped inside the onnx PyPI package) for the conformance suite.
# Creates/reuses a venv at <repo>/.venv, installs onnx + numpy into it if missing, and prints the
# path of the node test folder on stdout (everything else goes to stderr): onnx/backend/test/data/node
# when the wheel ships it, else a copy generated once per onnx version under the venv.
# Exit 0: path printed. Exit 77: onnx could not be installed (registry unreachable) -> callers skip.
# Exit 1: anything else (no python3/venv, broken install).
set -u
REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${OPTIMIUM_VENV:-$REPO_ROOT/.venv}"
SKIP_CODE=77

if ! command -v python3 >/dev/null 2>&1; then
  echo "error: python3 not found" >&2
  exit 1
fi
if [ ! -x "$VENV/bin/python" ]; then
  echo "creating venv $VENV" >&2
  if ! python3 -m venv "$VENV" >&2; then
    echo "error: python3 -m venv failed (apt-get install python3-venv)" >&2
    exit 1
  fi
fi
PY="$VENV/bin/python"

# Since onnx 1.20 the wheel no longer ships data/node: the node tests are generated in memory from
# onnx.backend.test.case.node. Write them to disk once per onnx version (the same layout
# backend-test-tools used to write: <test>/model.onnx, test_data_set_0/{input,output}_N.pb), plus
# data.json with each test's rtol/atol.
GEN_PY='
import json, os, shutil, sys, warnings
warnings.simplefilter("ignore")
import onnx
import onnx.backend.test
from onnx import TensorProto, numpy_helper
shipped = os.path.join(os.path.dirname(onnx.backend.test.__file__), "data", "node")
if os.path.isdir(shipped) and os.listdir(shipped):
    print(shipped); sys.exit(0)
root = os.path.join(sys.argv[1], "onnx-node-data-" + onnx.__version__)
out = os.path.join(root, "node")
if os.path.exists(os.path.join(root, "complete")):
    print(out); sys.exit(0)
import onnx.backend.test.case.node as node_test
shutil.rmtree(root, ignore_errors=True)
def serialize(value, type_proto, name):
    if type_proto.HasField("sequence_type"):
        return numpy_helper.from_list(value, name).SerializeToString()
    if type_proto.HasField("optional_type"):
        return numpy_helper.from_optional(value, name).SerializeToString()
    if type_proto.HasField("map_type"):
        return numpy_helper.from_dict(value, name).SerializeToString()
    if isinstance(value, TensorProto):
        return value.SerializeToString()
    return numpy_helper.from_array(value, name).SerializeToString()
for case in node_test.collect_testcases():
    case_dir = os.path.join(out, case.name)
    os.makedirs(case_dir)
    with open(os.path.join(case_dir, "model.onnx"), "wb") as f:
        f.write(case.model.SerializeToString())
    with open(os.path.join(case_dir, "data.json"), "w") as f:
        json.dump({"rtol": case.rtol, "atol": case.atol}, f)
    graph = case.model.graph
    for i, (inputs, outputs) in enumerate(case.data_sets):
        ds = os.path.join(case_dir, "test_data_set_%d" % i)
        os.makedirs(ds)
        for j, v in enumerate(inputs):
            with open(os.path.join(ds, "input_%d.pb" % j), "wb") as f:
                f.write(serialize(v, graph.input[j].type, graph.input[j].name))
        for j, v in enumerate(outputs):
            with open(os.path.join(ds, "output_%d.pb" % j), "wb") as f:
                f.write(serialize(v, graph.output[j].type, graph.output[j].name))
open(os.path.join(root, "complete"), "w").close()
print(out)
'

GEN_LOG="$VENV/onnx-node-data.log"
node_dir() { "$PY" -c "$GEN_PY" "$VENV" 2>"$GEN_LOG"; }

if ! "$PY" -c "import onnx, numpy" 2>/dev/null; then
  echo "installing onnx and numpy into $VENV" >&2
  if ! "$PY" -m pip install --disable-pip-version-check -q onnx numpy >&2; then
    echo "SKIP: cannot install onnx from PyPI (registry unreachable)" >&2
    echo "SKIP: cannot install onnx from PyPI (registry unreachable)"
    exit $SKIP_CODE
  fi
fi
if ! DIR="$(node_dir)"; then
  echo "error: could not write the onnx node tests:" >&2
  tail -n 20 "$GEN_LOG" >&2
  exit 1
fi
echo "$DIR"

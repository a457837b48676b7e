"""request.profile() and its events/durations: the spec's Python profiling sample (section 10,
adapted only in the model path and the inputs) plus checks of what it prints."""
import numpy as np
import pytest

from conftest import DIGITS, TEST_MODELS


def test_spec_profiling_sample(rt, capsys):
    model = rt.load_model(str(DIGITS / "model.onnx"))
    request = model.create_request()
    inputs = [np.load(DIGITS / "sample_input.npy")]

    def main():
        request.profile(
            inputs,
            repeat=100,
            warmup=10,
            warmup_time=1000000,   # microseconds
            stop_threshold=0,      # microseconds; 0 disables early stop
            check_period=0,
            event_buffer_size=0,   # event capacity; 0 = default (4,194,304 events)
        )

        # raw events
        for event in request.get_profile_events():
            print(f"Event: {event.kind} at {event.timestamp}")

        # computed durations (nanoseconds, grouped by model/layer/copy)
        durations = request.get_profile_durations()
        print(f"Model: {durations.model_name}")
        print(f"Model durations (ns): {durations.model_durations}")
        for name, layer_dur in durations.layer_durations.items():
            print(f"  Layer '{name}': {layer_dur}")
        for name, copy_dur in durations.copy_durations.items():
            print(f"  Copy '{name}': {copy_dur}")

    main()
    out = capsys.readouterr().out
    assert "Event: ProfileEventKind.MODEL_EXECUTE_BEGIN at" in out
    durations = request.get_profile_durations()
    assert durations.model_name == model.name
    assert len(durations.model_durations) == 100
    assert all(isinstance(d, int) and d > 0 for d in durations.model_durations)
    assert set(durations.layer_durations) == {op.name for op in model.operations}
    assert all(len(v) == 100 for v in durations.layer_durations.values())
    assert durations.copy_durations == {}

    events = request.get_profile_events()
    kinds = [e.kind for e in events]
    assert kinds.count(rt.ProfileEventKind.MODEL_EXECUTE_BEGIN) == 100
    assert kinds.count(rt.ProfileEventKind.LAYER_EXECUTE_END) == 100 * len(model.operations)
    layer = next(e for e in events if e.kind == rt.ProfileEventKind.LAYER_EXECUTE_BEGIN)
    assert 0 <= layer.operation < len(model.operations) and layer.thread_id > 0
    assert isinstance(layer.timestamp, int)
    assert request.dropped_profile_events == 0
    summary = request.get_layer_durations()
    assert len(summary) == len(model.operations)
    assert all(s.count == 100 for s in summary)
    assert [s.total_ns for s in summary] == sorted((s.total_ns for s in summary), reverse=True)


def test_profile_positional_dict_and_errors(rt):
    model = rt.load_model(str(TEST_MODELS / "two_inputs" / "model.onnx"))
    request = model.create_request()
    a = np.load(TEST_MODELS / "two_inputs" / "input_0.npy")
    b = np.load(TEST_MODELS / "two_inputs" / "input_1.npy")
    request.profile({"a": a, "b": b}, 3, 1, 1000000, 0, 0, 1 << 16)   # positional works too
    assert len(request.get_profile_durations().model_durations) == 3
    request.profile([a, b], repeat=10, warmup=0, stop_threshold=10_000_000, check_period=2)   # early stop
    assert len(request.get_profile_durations().model_durations) == 4
    np.testing.assert_allclose(request.get_output(0).to_numpy(), (a + b) * a, rtol=1e-6)
    with pytest.raises(ValueError):
        request.profile([a, b], repeat=0)
    with pytest.raises(ValueError):
        request.profile([a, b], event_buffer_size=-1)
    with pytest.raises(ValueError):
        request.profile({"a": a})
    with pytest.raises(TypeError):
        request.profile([a.astype(np.float64), b])


def test_small_event_buffer_drops(rt):
    model = rt.load_model(str(DIGITS / "model.onnx"))
    request = model.create_request()
    request.profile([np.load(DIGITS / "sample_input.npy")], repeat=5, warmup=0, event_buffer_size=8)
    assert len(request.get_profile_events()) == 8
    assert request.dropped_profile_events > 0


def test_spec_basic_and_batch_profiler(tmp_path, capsys):
    from optimium.runtime.profile import BasicProfiler, BatchProfiler

    profiler = BasicProfiler(
        str(DIGITS),
        memory_optimization=True,
        disable_denormals=False,
        threads=1,
        cores=None,
        intermediate_save_path="",
    )

    profiler.profile(repeat=100, warmup=10, warmup_time=1000000)

    print(f"Model: min={profiler.model_stat.min}, "
          f"max={profiler.model_stat.max}, "
          f"mean={profiler.model_stat.mean:.2f}")

    for stat in profiler.layer_stats:
        print(f"  Layer {stat.name}: mean={stat.mean:.2f}")

    profiler.dump_json(tmp_path / "profile_results.json")

    assert profiler.model_stat.count == 100
    assert 0 < profiler.model_stat.min <= profiler.model_stat.mean <= profiler.model_stat.max
    assert len(profiler.layer_stats) == len(profiler.model.operations)
    import json
    report = json.loads((tmp_path / "profile_results.json").read_text())
    assert report["model_stat"]["count"] == 100 and len(report["layer_stats"]) == len(profiler.layer_stats)

    # Remote profiling (tests/python/test_remote.py runs it against a real server): nothing listens
    # on this loopback port, so the connection is refused with a ConnectionError naming it.
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        free = s.getsockname()[1]
    with pytest.raises(ConnectionError, match=str(free)):
        BasicProfiler(str(DIGITS), remote_address="127.0.0.1", remote_port=free)

    batch1_inputs = [np.ones((1, 16), np.float32)]
    batch2_inputs = [np.ones((3, 16), np.float32)]
    profiler = BatchProfiler(str(TEST_MODELS / "dynamic_batch" / "model.onnx"))
    profiler.profile(100, inputs=[batch1_inputs, batch2_inputs])

    for i, stat in enumerate(profiler.batch_stat):
        print(f"Batch {i}: mean={stat.model_stat.mean:.2f}")
    print(f"Total: mean={profiler.total_stat.model_stat.mean:.2f}")

    assert len(profiler.batch_stat) == 2
    assert profiler.total_stat.model_stat.count == 200
    assert "Total: mean=" in capsys.readouterr().out

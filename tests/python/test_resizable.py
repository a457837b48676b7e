"""Spec Python section 8 (resizable tensors): the sample on tests/models/resizable_cache (a 1-D
Preserved, Resizable "cache" of base shape (1024,) marked by its optimium.json; total = sum + x),
plus the error mapping and migration callbacks."""
import numpy as np
import pytest

from conftest import TEST_MODELS

CACHE_MODEL = str(TEST_MODELS / "resizable_cache")


def test_spec_sample(rt):
    inputs = [np.ones((1,), np.float32)]
    # --- spec sample, verbatim but the model path ---
    model = rt.load_model(
        CACHE_MODEL,
        resizable_capacities={"cache": (2048,)},   # plan the slot once at capacity
    )
    request = model.create_request()

    # Within capacity: metadata-only. No reallocation, content stays in place.
    request.set_tensor_shape("cache", (1536,))
    request.infer(inputs)
    request.wait()

    # Beyond a DECLARED capacity: hard cap -> ValueError
    # request.set_tensor_shape("cache", (4096,))
    # --- checks ---
    with pytest.raises(ValueError):
        request.set_tensor_shape("cache", (4096,))
    assert request.get_tensor("cache").to_numpy().shape == (1536,)
    assert model.get_tensor("cache").resizable
    assert not model.get_tensor("x").resizable
    assert model.input_names == ["x"]


def test_spec_sample_shrink_and_migration(rt):
    model = rt.load_model(CACHE_MODEL)
    request = model.create_request()
    # --- spec sample ---
    # Long prompt: the cache overflows its base capacity and the pool grows.
    request.set_tensor_shape("cache", (8192,))
    request.apply_shape_changes()

    # ... decode the long sequence ...

    # Short conversation next. Drop back down AND release the memory.
    request.set_tensor_shape("cache", (512,))
    request.apply_shape_changes(shrink_to_fit=True)

    calls = []

    def migrate(old, new):
        o = old.to_numpy()
        n = new.to_numpy()
        count = min(o.shape[0], n.shape[0])
        n[:count] = o[:count]      # e.g. a ring-buffer shift or custom fill
        calls.append(count)

    request.set_resize_migration("cache", migrate)

    # clear the callback to restore the default migration
    request.set_resize_migration("cache", None)
    # --- checks ---
    assert request.get_tensor("cache").to_numpy().shape == (512,)
    request.set_resize_migration("cache", migrate)
    request.set_tensor_shape("cache", (4,))
    request.apply_shape_changes()
    assert calls == [4]
    request.set_resize_migration("cache", lambda old, new: new.to_numpy().fill(2.5))
    request.set_tensor_shape("cache", (6,))
    request.infer([np.zeros((1,), np.float32)])   # applied lazily, callback runs with the GIL retaken
    request.wait()
    assert request.get_output("total").to_numpy()[0] == pytest.approx(15.0)
    with pytest.raises(ValueError):
        request.set_resize_migration("x", None)


def test_errors(rt):
    model = rt.load_model(CACHE_MODEL)
    request = model.create_request()
    with pytest.raises(ValueError):
        request.set_tensor_shape("x", (2,))           # not resizable
    with pytest.raises(rt.ShapeError):
        request.set_tensor_shape("cache", (2, 2))     # other rank

    def boom(old, new):
        raise KeyError("migration boom")

    request.set_resize_migration("cache", boom)
    request.set_tensor_shape("cache", (10,))
    with pytest.raises(KeyError):
        request.apply_shape_changes()
    assert request.status == rt.InferStatus.FAULT
    assert request.get_tensor("cache").to_numpy().shape == (1024,)
    with pytest.raises(rt.ModelError):
        rt.load_model(CACHE_MODEL, resizable_capacities={"cache": (16,)})   # smaller than base

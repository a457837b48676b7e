"""BasicProfiler / BatchProfiler: convenience profilers over InferRequest.profile() (spec section 10).

Statistics are in nanoseconds, from the events of request.profile(): ``model_stat`` over the
runs (ModelExecuteBegin..End), ``layer_stats`` per operation (LayerExecuteBegin..End), largest
mean first. Without inputs, profile() feeds random ones built from the model's metadata by the
rule optimium-benchmark shares (_random_inputs: floats uniform in [-1, 1), integers and booleans
0, symbolic dims 1).
"""
from __future__ import annotations

import json
import os
import statistics
from dataclasses import asdict, dataclass, field
from typing import Dict, List, Optional, Sequence, Union

import numpy as np

from . import _core
from ._random_inputs import random_array

__all__ = ["Stat", "ProfileResult", "BasicProfiler", "BatchProfiler"]


@dataclass
class Stat:
    """min / max / mean / median / count of durations (nanoseconds)."""

    name: str = ""
    count: int = 0
    min: int = 0
    max: int = 0
    mean: float = 0.0
    median: float = 0.0
    values: List[int] = field(default_factory=list, repr=False)

    @classmethod
    def of(cls, name: str, values: Sequence[int]) -> "Stat":
        values = list(values)
        if not values:
            return cls(name=name)
        return cls(name=name, count=len(values), min=min(values), max=max(values),
                   mean=float(statistics.fmean(values)), median=float(statistics.median(values)), values=values)


@dataclass
class ProfileResult:
    """One profile: the model's statistics and one Stat per layer (largest mean first)."""

    model_stat: Stat
    layer_stats: List[Stat]
    copy_stats: List[Stat]


def _random_inputs(model, seed: int = 0) -> list:
    """Random inputs by the rule optimium-benchmark and random_inputs_from_info share (see
    _random_inputs): floats uniform in [-1, 1), integers and booleans 0, symbolic dims 1."""
    rng = np.random.default_rng(seed)
    infos = (model.input_tensor_infos if hasattr(model, "input_tensor_infos")  # a RemoteModel
             else [model.get_tensor(name) for name in model.input_names])
    return [random_array(info.type.to_dtype(), info.shape, rng, info.type.name) for info in infos]


def _result(request) -> ProfileResult:
    d = request.get_profile_durations()
    layers = [Stat.of(name, v) for name, v in d.layer_durations.items()]
    layers.sort(key=lambda s: s.mean, reverse=True)
    copies = [Stat.of(name, v) for name, v in d.copy_durations.items()]
    return ProfileResult(Stat.of(d.model_name, d.model_durations), layers, copies)


class _RemoteRequest:
    """The request-shaped view of a RemoteModel: profile() blocks (profile + wait) as
    InferRequest.profile() does; durations come from the server."""

    def __init__(self, model):
        self.model = model

    def profile(self, inputs, repeat, warmup, warmup_time, stop_threshold, check_period):
        self.model.profile(inputs, repeat=repeat, warmup=warmup, warmup_time=warmup_time,
                           stop_threshold=stop_threshold, check_period=check_period)
        self.model.wait()

    def get_profile_durations(self):
        return self.model.get_profile_durations()


class BasicProfiler:
    """Loads a model (keyword options as rt.load_model) and profiles one input set. With
    ``remote_address``, the model path is on that optimium-remote-server (inside its workspace) and
    the model runs and is timed there."""

    def __init__(self, model_path: Union[str, os.PathLike], memory_optimization: bool = True,
                 disable_denormals: bool = False, threads: int = 1, cores: Optional[Sequence[int]] = None,
                 intermediate_save_path: str = "", remote_address: Optional[str] = None,
                 remote_port: int = 32264):
        options = dict(memory_optimization=memory_optimization, disable_denormals=disable_denormals,
                       threads=threads, cores=list(cores) if cores else None,
                       intermediate_save_path=intermediate_save_path or None)
        self.session = None
        if remote_address is not None:
            self.session = _core.connect(remote_address, port=remote_port)
            self.model = self.session.load_model(str(model_path), **options)
            self.request = _RemoteRequest(self.model)
        else:
            self.model = _core.load_model(str(model_path), **options)
            self.request = self.model.create_request()
        self.result: Optional[ProfileResult] = None

    def profile(self, repeat: int = 100, warmup: int = 10, warmup_time: int = 1000000, inputs=None,
                stop_threshold: int = 0, check_period: int = 0) -> ProfileResult:
        if inputs is None:
            inputs = _random_inputs(self.model)
        self.request.profile(inputs, repeat, warmup, warmup_time, stop_threshold, check_period)
        self.result = _result(self.request)
        return self.result

    def _need(self) -> ProfileResult:
        if self.result is None:
            raise RuntimeError("call profile() first")
        return self.result

    @property
    def model_stat(self) -> Stat:
        return self._need().model_stat

    @property
    def layer_stats(self) -> List[Stat]:
        return self._need().layer_stats

    @property
    def copy_stats(self) -> List[Stat]:
        return self._need().copy_stats

    def to_dict(self) -> Dict:
        r = self._need()
        strip = lambda s: {k: v for k, v in asdict(s).items() if k != "values"}  # noqa: E731
        return {"model": self.model.name, "unit": "ns", "model_stat": strip(r.model_stat),
                "layer_stats": [strip(s) for s in r.layer_stats], "copy_stats": [strip(s) for s in r.copy_stats]}

    def dump_json(self, path: Union[str, os.PathLike]) -> None:
        with open(path, "w") as f:
            json.dump(self.to_dict(), f, indent=2)


class BatchProfiler(BasicProfiler):
    """Profiles several input sets: ``batch_stat[i]`` per set, ``total_stat`` over all runs."""

    def profile(self, repeat: int = 100, warmup: int = 10, warmup_time: int = 1000000, inputs=None,  # type: ignore[override]
                stop_threshold: int = 0, check_period: int = 0) -> ProfileResult:
        batches = inputs if inputs is not None else [None]
        self.batch_stat: List[ProfileResult] = []
        model_values: List[int] = []
        layer_values: Dict[str, List[int]] = {}
        for batch in batches:
            r = super().profile(repeat, warmup, warmup_time, batch, stop_threshold, check_period)
            self.batch_stat.append(r)
            model_values += r.model_stat.values
            for s in r.layer_stats:
                layer_values.setdefault(s.name, []).extend(s.values)
        layers = sorted((Stat.of(n, v) for n, v in layer_values.items()), key=lambda s: s.mean, reverse=True)
        self.total_stat = ProfileResult(Stat.of(self.model.name, model_values), layers, [])
        self.result = self.total_stat
        return self.total_stat

"""Tensor print configuration: ``rt.config.set_print_threshold(10)``, ``rt.config.set_print_precision(4)``."""

from ._core import config as _native

set_print_threshold = _native.set_print_threshold
get_print_threshold = _native.get_print_threshold
set_print_precision = _native.set_print_precision
get_print_precision = _native.get_print_precision

__all__ = ["set_print_threshold", "get_print_threshold", "set_print_precision", "get_print_precision"]

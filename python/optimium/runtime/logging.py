"""Runtime log level and log writers: ``rt.logging.set_loglevel(rt.logging.LogLevel.DEBUG)``."""

from ._core import logging as _native

LogLevel = _native.LogLevel
set_loglevel = _native.set_loglevel
get_loglevel = _native.get_loglevel
enable_console_log = _native.enable_console_log
enable_file_log = _native.enable_file_log
clear_log_writers = _native.clear_log_writers

__all__ = ["LogLevel", "set_loglevel", "get_loglevel", "enable_console_log", "enable_file_log", "clear_log_writers"]

"""Small helpers shared by the benchmarks: percentiles, a clock, the machine description."""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import platform
import sqlite3
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["clock_ms", "machine", "percentile", "positive", "rate", "ratio"]


def percentile(samples: Sequence[float], q: float) -> float:
    """The nearest-rank ``q``-th percentile (0 < q <= 100) of ``samples``."""
    if not samples:
        raise ValueError("no samples")
    ordered = sorted(samples)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


def clock_ms(call: Callable[[], object]) -> tuple[float, object]:
    """Run ``call`` once; return the elapsed wall time in milliseconds and its result."""
    start = time.perf_counter_ns()
    result = call()
    return (time.perf_counter_ns() - start) / 1e6, result


def ratio(numerator: float, denominator: float) -> float:
    """``numerator / denominator`` rounded for a report (0 when the denominator is 0)."""
    return round(numerator / denominator, 1) if denominator > 0 else 0.0


def positive(text: str) -> int:
    """An argparse type: a whole number above 0."""
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError("give a positive number")
    return value


def rate(count: int, seconds: float) -> float:
    """Items per second, rounded."""
    return round(count / seconds, 1) if seconds > 0 else 0.0


def _cpu_model() -> str:
    with contextlib.suppress(OSError), open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
        for line in cpuinfo:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    # No /proc/cpuinfo (not Linux): the platform's own, coarser description.
    return platform.processor() or platform.machine()


def machine() -> dict[str, Any]:
    """What the figures were measured on."""
    return {
        "cpus": os.cpu_count(),
        "cpu": _cpu_model(),
        "python": sys.version.split()[0],
        "sqlite": sqlite3.sqlite_version,
        "platform": platform.platform(),
    }

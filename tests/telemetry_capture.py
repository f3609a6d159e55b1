"""The OpenTelemetry SDK, installed once for the test process, exporting into memory.

The global providers can be set once per process, so the fixture ``telemetry`` installs them
the first time a test asks (through vigente's own ``telemetry.configure``, as an application
would) and each test reads only what it caused: the span exporter records while a test holds
the fixture, and metric points are compared as before/after sums.
"""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk", reason="the OpenTelemetry SDK is not installed (otel)")

from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
    InMemorySpanExporter,
)

from vigente import telemetry as vt

__all__ = ["Captured", "telemetry"]


class _WhileCapturing(SpanProcessor):
    """Hands ended spans to the in-memory exporter only while a test captures (the rest of
    the suite runs with the provider installed and keeps nothing)."""

    def __init__(self, inner: SpanProcessor) -> None:
        self.inner = inner
        self.on = False

    def on_end(self, span: ReadableSpan) -> None:
        if self.on:
            self.inner.on_end(span)

    def shutdown(self) -> None:
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self.inner.force_flush(timeout_millis)


@dataclass
class Captured:
    exporter: InMemorySpanExporter
    reader: InMemoryMetricReader
    gate: _WhileCapturing
    log: io.StringIO = field(default_factory=io.StringIO)

    def spans(self, name: str | None = None) -> list[ReadableSpan]:
        found = list(self.exporter.get_finished_spans())
        return [s for s in found if name is None or s.name == name]

    def one(self, name: str) -> ReadableSpan:
        found = self.spans(name)
        assert len(found) == 1, [s.name for s in self.spans()]
        return found[0]

    def points(self) -> dict[tuple[str, tuple[tuple[str, Any], ...]], float]:
        """Every metric point now: (name, labels) → value (a histogram's count)."""
        data = self.reader.get_metrics_data()
        out: dict[tuple[str, tuple[tuple[str, Any], ...]], float] = {}
        for rm in data.resource_metrics if data else ():
            for sm in rm.scope_metrics:
                for metric in sm.metrics:
                    for p in metric.data.data_points:
                        value = getattr(p, "value", None)
                        if value is None:
                            value = p.count
                        out[metric.name, tuple(sorted(dict(p.attributes or {}).items()))] = value
        return out

    def log_lines(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.log.getvalue().splitlines() if line]

    def exported_text(self) -> str:
        """Everything exported, as text: each span (name, attributes, events, status), every
        metric point's labels, and every log line."""
        parts = [s.to_json() for s in self.spans()]
        parts += [repr(key) for key in self.points()]
        parts.append(self.log.getvalue())
        return "\n".join(parts)


_INSTALLED: Captured | None = None


def _install() -> Captured:
    global _INSTALLED
    if _INSTALLED is None:
        exporter = InMemorySpanExporter()
        gate = _WhileCapturing(SimpleSpanProcessor(exporter))
        reader = InMemoryMetricReader()
        vt.configure(span_processors=[gate], metric_readers=[reader], prometheus=True)
        _INSTALLED = Captured(exporter, reader, gate)
    return _INSTALLED


@pytest.fixture
def telemetry() -> Iterator[Captured]:
    """The SDK's in-memory span and metric exporters, and vigente's loggers writing JSON lines
    (vigente.telemetry.JsonFormatter) into ``log``, for one test."""
    captured = _install()
    captured.exporter.clear()
    captured.log = io.StringIO()
    handler = logging.StreamHandler(captured.log)
    handler.setFormatter(vt.JsonFormatter())
    logger = logging.getLogger("vigente")
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    captured.gate.on = True
    try:
        yield captured
    finally:
        captured.gate.on = False
        logger.removeHandler(handler)
        logger.setLevel(level)
        captured.exporter.clear()

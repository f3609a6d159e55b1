"""One measuring process of ``python -m vigente.bench telemetry``: telemetry set up one way
(``off``: no SDK, the API's no-ops; ``noop``: the SDK, every span and metric recorded and handed
to exporters that drop them; ``memory``: the SDK with its in-memory span exporter and metric
reader, synchronously), then assemblies and asks timed on a prepared database. Prints one JSON
object of samples (milliseconds) on stdout.

A global provider is set once per process, so each set-up runs in a process of its own.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from typing import Any

__all__ = ["main"]


def _configure(mode: str) -> Any:
    if mode == "off":
        return None
    from opentelemetry.sdk.metrics.export import (
        InMemoryMetricReader,
        MetricExporter,
        MetricExportResult,
        PeriodicExportingMetricReader,
    )
    from opentelemetry.sdk.trace.export import (
        BatchSpanProcessor,
        SimpleSpanProcessor,
        SpanExporter,
        SpanExportResult,
    )
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from vigente import telemetry

    class DropSpans(SpanExporter):
        def export(self, spans: Sequence[Any]) -> SpanExportResult:
            return SpanExportResult.SUCCESS

    class DropMetrics(MetricExporter):
        def export(self, metrics_data: Any, timeout_millis: float = 10_000,
                   **kwargs: Any) -> MetricExportResult:
            return MetricExportResult.SUCCESS

        def force_flush(self, timeout_millis: float = 10_000) -> bool:
            return True

        def shutdown(self, timeout_millis: float = 30_000, **kwargs: Any) -> None:
            return None

    if mode == "noop":
        return telemetry.configure(
            span_processors=[BatchSpanProcessor(DropSpans())],
            metric_readers=[PeriodicExportingMetricReader(DropMetrics(),
                                                          export_interval_millis=1_000)],
        )
    return telemetry.configure(
        span_processors=[SimpleSpanProcessor(InMemorySpanExporter())],
        metric_readers=[InMemoryMetricReader()],
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", choices=["off", "noop", "memory"], required=True)
    parser.add_argument("--url", required=True)
    parser.add_argument("--conversation", required=True)
    parser.add_argument("--lineage", required=True)
    parser.add_argument("--reads", type=int, default=100)
    args = parser.parse_args(argv)
    setup = _configure(args.mode)
    from vigente.api import Vigente

    samples: dict[str, list[float]] = {"assemble": [], "ask": []}
    with Vigente.open(args.url) as vg:
        for _ in range(5):  # warm: the tokenizer, the caches, the connection
            vg.assembly.assemble(args.conversation, "main", "agent", persist=False)
            vg.evidence(args.lineage, valid_at="2026-10-01")
        for _ in range(args.reads):
            start = time.perf_counter_ns()
            vg.assembly.assemble(args.conversation, "main", "agent", persist=False)
            samples["assemble"].append((time.perf_counter_ns() - start) / 1e6)
            start = time.perf_counter_ns()
            vg.evidence(args.lineage, valid_at="2026-10-01")
            samples["ask"].append((time.perf_counter_ns() - start) / 1e6)
    if setup is not None:
        setup.shutdown()
    sys.stdout.write(json.dumps(samples) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Turning telemetry on: the OpenTelemetry SDK (the ``otel`` extra), its exporters, and the
Prometheus registry that ``/metrics`` serves.

vigente itself only calls the OpenTelemetry API. Something has to install an SDK for the calls
to record anything, and there are three ways:

- the standard environment variables, read by :func:`configure_from_environment` (which
  ``vigente serve`` and every CLI command call): ``OTEL_TRACES_EXPORTER`` and
  ``OTEL_METRICS_EXPORTER`` (``otlp``, ``console`` or ``none``), ``OTEL_EXPORTER_OTLP_ENDPOINT``,
  ``OTEL_SERVICE_NAME``, ``OTEL_RESOURCE_ATTRIBUTES``; ``vigente serve --metrics`` adds the
  Prometheus reader;
- :func:`configure`, from Python, with exporters, span processors and metric readers of one's
  own (the tests pass the SDK's in-memory ones);
- an application (or ``opentelemetry-instrument``) that has set the global providers already:
  vigente then leaves them as they are and its spans join that application's traces.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from opentelemetry import metrics, trace

from vigente.errors import InvalidInput

__all__ = [
    "Telemetry",
    "configure",
    "configure_from_environment",
    "prometheus_exposition",
    "telemetry_requested",
]

_EXTRA = "pip install 'vigente[otel]'"
_active: Telemetry | None = None


@dataclass
class Telemetry:
    """What :func:`configure` installed (``None`` where an application's own provider was
    left in place); :meth:`shutdown` flushes and stops the exporters."""

    tracer_provider: Any = None
    meter_provider: Any = None
    prometheus_registry: Any = None
    notes: list[str] = field(default_factory=list)

    def shutdown(self) -> None:
        for provider in (self.tracer_provider, self.meter_provider):
            if provider is not None:
                provider.shutdown()


def _configured(provider: Any) -> bool:
    """Whether a global provider is an application's (not the API's deferred proxy)."""
    return type(provider).__name__ not in ("ProxyTracerProvider", "_ProxyMeterProvider")


def _need_sdk(what: str) -> None:
    try:
        import opentelemetry.sdk  # noqa: F401
    except ImportError:
        raise InvalidInput(f"{what} needs the OpenTelemetry SDK: {_EXTRA}") from None


def configure(
    *,
    span_exporters: Sequence[Any] = (),
    span_processors: Sequence[Any] = (),
    metric_readers: Sequence[Any] = (),
    prometheus: bool = False,
    service_name: str | None = None,
) -> Telemetry:
    """Install the SDK's providers as the global ones, exporting to ``span_exporters``
    (batched), ``span_processors`` and ``metric_readers``, and, with ``prometheus``, into the
    registry that :func:`prometheus_exposition` renders. A global provider an application set
    first is kept (the new exporters are then not installed, and ``notes`` says so). A later
    call installs only what no earlier one did (a provider is global and set once: the
    ``vigente`` command configures traces before ``serve --metrics`` adds the Prometheus
    reader); it returns the process's one :class:`Telemetry`."""
    global _active
    _need_sdk("telemetry")
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.resources import SERVICE_NAME, Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    from vigente._version import __version__

    resource = Resource.create(
        {"service.version": __version__,
         **({SERVICE_NAME: service_name} if service_name else {})}
    )
    if str(resource.attributes.get(SERVICE_NAME, "")).startswith("unknown_service"):
        resource = resource.merge(Resource.create({SERVICE_NAME: "vigente"}))
    setup = _active if _active is not None else Telemetry()
    if span_exporters or span_processors:
        if setup.tracer_provider is not None or _configured(trace.get_tracer_provider()):
            setup.notes.append("a tracer provider is set already: its exporters are used")
        else:
            tracer_provider = TracerProvider(resource=resource)
            for exporter in span_exporters:
                tracer_provider.add_span_processor(BatchSpanProcessor(exporter))
            for processor in span_processors:
                tracer_provider.add_span_processor(processor)
            trace.set_tracer_provider(tracer_provider)
            setup.tracer_provider = tracer_provider
    readers = list(metric_readers)
    registry = None
    if prometheus:
        try:
            from opentelemetry.exporter.prometheus import PrometheusMetricReader
            from prometheus_client import CollectorRegistry
        except ImportError:
            raise InvalidInput(f"the Prometheus endpoint needs its exporter: {_EXTRA}") from None
        registry = CollectorRegistry()
        readers.append(PrometheusMetricReader(registry=registry))
    if readers:
        if setup.meter_provider is not None or _configured(metrics.get_meter_provider()):
            setup.notes.append("a meter provider is set already: its readers are used")
        else:
            options: dict[str, Any] = {}
            if not os.environ.get("OTEL_METRICS_EXEMPLAR_FILTER"):
                # exemplars (a sampled span's ids kept on each point) cost a third of every
                # measurement and the Prometheus text format does not carry them: off unless
                # OTEL_METRICS_EXEMPLAR_FILTER asks for them
                from opentelemetry.sdk.metrics import AlwaysOffExemplarFilter

                options["exemplar_filter"] = AlwaysOffExemplarFilter()
            meter_provider = MeterProvider(resource=resource, metric_readers=readers, **options)
            metrics.set_meter_provider(meter_provider)
            setup.meter_provider = meter_provider
            setup.prometheus_registry = registry
    _active = setup
    return setup


def _exporters(variable: str) -> list[str]:
    value = os.environ.get(variable, "").strip().lower()
    names = [n.strip() for n in value.split(",") if n.strip() and n.strip() != "none"]
    known = {"otlp", "console"} | ({"prometheus"} if variable == "OTEL_METRICS_EXPORTER" else set())
    unknown = sorted(set(names) - known)
    if unknown:
        raise InvalidInput(
            f"{variable}={value!r} names an exporter vigente does not know ({', '.join(unknown)}): "
            f"use {', '.join(sorted(known))} or none"
        )
    return names


def telemetry_requested() -> bool:
    """Whether the environment asks for traces or metrics (``OTEL_SDK_DISABLED`` aside)."""
    if os.environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    return bool(_exporters("OTEL_TRACES_EXPORTER") or _exporters("OTEL_METRICS_EXPORTER"))


def configure_from_environment(*, prometheus: bool = False,
                               service_name: str | None = None) -> Telemetry | None:
    """Telemetry as the standard ``OTEL_*`` variables ask (and ``prometheus``, for
    ``vigente serve --metrics``); ``None`` when nothing is asked for (everything stays a no-op)."""
    if not (telemetry_requested() or prometheus):
        return None
    traces = _exporters("OTEL_TRACES_EXPORTER")
    wanted = _exporters("OTEL_METRICS_EXPORTER")
    _need_sdk("OTEL_TRACES_EXPORTER / OTEL_METRICS_EXPORTER")
    span_exporters: list[Any] = []
    readers: list[Any] = []
    if "otlp" in traces or "otlp" in wanted:
        try:
            from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        except ImportError:
            raise InvalidInput(f"the OTLP exporter is not installed: {_EXTRA}") from None
        if "otlp" in traces:
            span_exporters.append(OTLPSpanExporter())
        if "otlp" in wanted:
            from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader

            readers.append(PeriodicExportingMetricReader(OTLPMetricExporter()))
    if "console" in traces or "console" in wanted:
        from opentelemetry.sdk.metrics.export import (
            ConsoleMetricExporter,
            PeriodicExportingMetricReader,
        )
        from opentelemetry.sdk.trace.export import ConsoleSpanExporter

        if "console" in traces:
            span_exporters.append(ConsoleSpanExporter())
        if "console" in wanted:
            readers.append(PeriodicExportingMetricReader(ConsoleMetricExporter()))
    return configure(
        span_exporters=span_exporters,
        metric_readers=readers,
        prometheus=prometheus or "prometheus" in wanted,
        service_name=service_name,
    )


def prometheus_exposition() -> tuple[bytes, str] | None:
    """The metrics in the Prometheus text format, with its content type; ``None`` when no
    Prometheus reader is configured."""
    if _active is None or _active.prometheus_registry is None:
        return None
    from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

    return generate_latest(_active.prometheus_registry), CONTENT_TYPE_LATEST

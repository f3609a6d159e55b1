"""What vigente decides, as OpenTelemetry spans and metrics and as structured logs.

vigente calls the OpenTelemetry API only; with no SDK installed and configured everything here
is a no-op. ``vigente serve`` and the CLI configure the SDK from the standard ``OTEL_*``
variables (:func:`configure_from_environment`); Python code can call :func:`configure`, or set
the global providers itself. Spans and metrics carry ids, counts, statuses and policy names,
never message text, tool content or values (docs/guarantees.md, "Telemetry";
docs/deployment.md, "Observability").
"""

from __future__ import annotations

from typing import Any

from vigente.errors import AnsweredHistoryError, HistoryRewriteError, RuntimeHistoryConflict
from vigente.telemetry._logs import JsonFormatter, exception_summary, trace_fields
from vigente.telemetry._metrics import (
    record_assembly,
    record_evidence,
    record_http,
    record_import,
    record_operation,
    record_purge,
    record_recall,
    record_refusal,
    record_search,
    recording,
    watch_store_size,
)
from vigente.telemetry._setup import (
    Telemetry,
    configure,
    configure_from_environment,
    prometheus_exposition,
    telemetry_requested,
)
from vigente.telemetry._spans import (
    CurrentSpan,
    annotate,
    assembly_attributes,
    error_type,
    evidence_attributes,
    included_counts,
    quiet,
    span,
    traced,
    tracer,
)

__all__ = [
    "CurrentSpan",
    "JsonFormatter",
    "Telemetry",
    "annotate",
    "answered",
    "assembly_attributes",
    "configure",
    "configure_from_environment",
    "error_type",
    "evidence_attributes",
    "exception_summary",
    "included_counts",
    "prometheus_exposition",
    "quiet",
    "record_assembly",
    "recording",
    "record_evidence",
    "record_http",
    "record_import",
    "record_operation",
    "record_purge",
    "record_recall",
    "record_refusal",
    "record_search",
    "refused",
    "span",
    "telemetry_requested",
    "traced",
    "trace_fields",
    "tracer",
    "watch_store_size",
]


def answered(evidence: Any, kind: str) -> None:
    """An answer's telemetry: its metric, and its attributes on the current span (``kind``:
    ``fact`` or ``document``)."""
    record_evidence(str(evidence.status), str(evidence.interpretation))
    annotate({**evidence_attributes(evidence), "vigente.evidence.kind": kind})


def refused(exc: BaseException, surface: str) -> None:
    """Count ``exc`` when it is a write refused for rewriting history, or an error raised
    from one (a surface calls this where it maps an error to its answer, so each refusal is
    counted once)."""
    refusal = exc if isinstance(exc, HistoryRewriteError) else exc.__cause__
    if not isinstance(refusal, HistoryRewriteError):
        return
    if isinstance(refusal, AnsweredHistoryError):
        kind = "answered_history"
    elif isinstance(refusal, RuntimeHistoryConflict):
        kind = "runtime_history"
    else:
        kind = "history_rewrite"
    record_refusal(kind, surface)
